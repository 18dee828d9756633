/**
 * The review grid, virtualised by rows so that 10,000 results scroll as smoothly as ten: only
 * the rows in view (plus a few) are in the DOM. Keyboard culling happens on the grid itself.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { ResultView } from '../../../shared/studio';
import { studio } from '../transport';

const CARD = 196;
const GAP = 12;
/** A tile's width with its 3 px border (styles.css .result-card), and a row's side padding. */
const TILE = CARD + 2 * 3;
const ROW_PADDING = 2 * 12;

export function ReviewGrid(props: {
  results: ResultView[];
  focusedId: string | null;
  selected: Record<string, true>;
  onFocus(id: string): void;
  onToggle(id: string): void;
  /** Shift-click: everything from the highlighted tile to this one, both included. */
  onRange(id: string): void;
  /** The source photo's file name of an item, shown on every tile. */
  nameOf(itemId: string): string;
  /** Results are offline previews (embedded, no AI provider): every tile says so. */
  preview: boolean;
  /** Returns true when it handled the key; gets the current column count for up/down. */
  onKey(key: string, columns: number): boolean;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(900);
  useEffect(() => {
    const element = scrollRef.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => entry && setWidth(entry.contentRect.width));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  // Whole tiles only: the count left out the row's padding and the borders, so at 1280 px the
  // fifth column ran past the grid's edge (review uirev C6).
  const columns = Math.max(1, Math.floor((width - ROW_PADDING + GAP) / (TILE + GAP)));
  const rows = Math.ceil(props.results.length / columns);
  const virtualizer = useVirtualizer({
    count: rows,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => CARD + 62 + GAP,
    overscan: 3,
  });

  const focusedIndex = props.results.findIndex((r) => r.id === props.focusedId);
  useEffect(() => {
    if (focusedIndex >= 0)
      virtualizer.scrollToIndex(Math.floor(focusedIndex / columns), { align: 'auto' });
  }, [focusedIndex, columns, virtualizer]);

  const onKeyDown = (event: KeyboardEvent) => {
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (event.metaKey || event.ctrlKey || event.altKey) return;
    if (props.onKey(key, columns)) event.preventDefault();
  };

  return (
    <div
      ref={scrollRef}
      className="review-grid"
      role="listbox"
      aria-label="Results to review"
      aria-multiselectable="true"
      aria-activedescendant={props.focusedId ? `result-${props.focusedId}` : undefined}
      tabIndex={0}
      onKeyDown={onKeyDown}
      data-testid="review-grid"
    >
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((row) => (
          <div
            key={row.key}
            className="review-row"
            style={{
              transform: `translateY(${row.start}px)`,
              gridTemplateColumns: `repeat(${columns}, ${TILE}px)`,
            }}
          >
            {props.results
              .slice(row.index * columns, row.index * columns + columns)
              .map((result) => (
                <div
                  key={result.id}
                  id={`result-${result.id}`}
                  role="option"
                  aria-selected={
                    Boolean(props.selected[result.id]) || result.id === props.focusedId
                  }
                  className={`result-card${result.id === props.focusedId ? ' focused' : ''}${props.selected[result.id] ? ' selected' : ''}`}
                  data-review={result.review}
                  onClick={(e) =>
                    e.shiftKey
                      ? props.onRange(result.id)
                      : e.metaKey || e.ctrlKey
                        ? props.onToggle(result.id)
                        : props.onFocus(result.id)
                  }
                >
                  {result.mime.startsWith('video/') ? (
                    <video
                      src={studio().libraryUrl(result.file)}
                      muted
                      width={CARD}
                      height={CARD}
                    />
                  ) : (
                    <img
                      className="checker"
                      src={studio().libraryUrl(result.thumb ?? result.file)}
                      alt=""
                      width={CARD}
                      height={CARD}
                      loading="lazy"
                      decoding="async"
                    />
                  )}
                  {props.preview ? <span className="preview-tag">preview</span> : null}
                  <span className="tile-name" title={props.nameOf(result.itemId)}>
                    {props.nameOf(result.itemId)} · {result.shotId ?? `#${result.n + 1}`}
                  </span>
                  <span className={`review-tag review-${result.review}`}>{result.review}</span>
                  {result.compliance && !result.compliance.ok ? (
                    <span className="problem small">fails export checks</span>
                  ) : null}
                </div>
              ))}
          </div>
        ))}
      </div>
    </div>
  );
}
