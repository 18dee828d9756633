/**
 * A searchable grid of catalog thumbnails (models, venues, poses, ready shoots, looks). A listbox:
 * arrow keys move, Enter or Space picks, typing in the search box filters.
 */
import { useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { studio } from '../transport';

export type PickerOption = { id: string; name: string; imageUrl: string | null; detail?: string };

export function CatalogPicker(props: {
  label: string;
  options: PickerOption[];
  value: string | null;
  onChange(id: string | null): void;
  optional?: boolean;
  filters?: React.ReactNode;
}) {
  const [query, setQuery] = useState('');
  const id = useId();
  const listRef = useRef<HTMLDivElement>(null);
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return q
      ? props.options.filter((o) => `${o.name} ${o.detail ?? ''} ${o.id}`.toLowerCase().includes(q))
      : props.options;
  }, [props.options, query]);
  const activeIndex = Math.max(
    0,
    shown.findIndex((o) => o.id === props.value),
  );

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const columns = Math.max(1, Math.round((listRef.current?.clientWidth ?? 600) / 166));
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns, ArrowUp: -columns }[event.key];
    if (step === undefined || shown.length === 0) return;
    event.preventDefault();
    const next = shown[Math.min(shown.length - 1, Math.max(0, activeIndex + step))]!;
    props.onChange(next.id);
    document.getElementById(`${id}-${next.id}`)?.scrollIntoView({ block: 'nearest' });
  };

  return (
    <fieldset className="picker">
      <legend>{props.label}</legend>
      <div className="picker-tools">
        <input
          type="search"
          aria-label={`Search ${props.label.toLowerCase()}`}
          placeholder="Search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        {props.filters}
        {props.optional && props.value ? (
          <button type="button" onClick={() => props.onChange(null)}>
            Clear
          </button>
        ) : null}
      </div>
      {shown.length === 0 ? (
        <p className="muted">Nothing matches “{query}”.</p>
      ) : (
        <div
          ref={listRef}
          className="picker-grid"
          role="listbox"
          aria-label={props.label}
          tabIndex={0}
          aria-activedescendant={props.value ? `${id}-${props.value}` : undefined}
          onKeyDown={onKeyDown}
        >
          {shown.map((option) => (
            <div
              key={option.id}
              id={`${id}-${option.id}`}
              role="option"
              aria-selected={option.id === props.value}
              className="picker-option"
              onClick={() => props.onChange(option.id)}
            >
              {option.imageUrl ? (
                <img
                  src={studio().mediaUrl(option.imageUrl)}
                  alt=""
                  loading="lazy"
                  width={148}
                  height={185}
                />
              ) : (
                <div className="placeholder" />
              )}
              <span>{option.name}</span>
              {option.detail ? <small>{option.detail}</small> : null}
            </div>
          ))}
        </div>
      )}
    </fieldset>
  );
}
