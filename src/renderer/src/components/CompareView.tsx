/**
 * The loupe: before (the dropped photo) and after (the result) side by side, at fit, 100% or 200%,
 * panned together by dragging or Shift+arrows. Arrows step through the results without leaving;
 * A/X decide and move on, R redoes, U undoes the last decision (as on the grid); Escape or Space closes. Cut-outs sit on a checkerboard or a chosen colour.
 */
import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import type { ResultView, ReviewState } from '../../../shared/studio';
import { useQueue } from '../stores/queue-store';
import { studio } from '../transport';

type Zoom = 'fit' | 1 | 2;
const BACKGROUNDS = {
  checker: 'Checkerboard',
  white: 'White',
  black: 'Black',
  grey: 'Grey',
} as const;
type Background = keyof typeof BACKGROUNDS;
const PAN_STEP = 120;

export function CompareView(props: {
  result: ResultView;
  position: { index: number; total: number };
  preview: boolean;
  onClose(): void;
  onDecide(review: ReviewState): void;
  onMove(step: number): void;
  /** Redo this result (priced and confirmed by the screen, as on the grid). */
  onRedo(): void;
  /** Undo the last decision; absent when there is none. */
  onUndo?: () => void;
}) {
  const { result } = props;
  const item = useQueue((s) => s.items[result.itemId]);
  const dialog = useRef<HTMLDivElement>(null);
  const panes = useRef<(HTMLDivElement | null)[]>([]);
  const [zoom, setZoom] = useState<Zoom>('fit');
  const [background, setBackground] = useState<Background>('checker');
  const drag = useRef<{ x: number; y: number; left: number; top: number } | null>(null);
  useEffect(() => dialog.current?.focus(), []);

  // Both panes show the same region: scrolling one scrolls the other.
  const panTo = (left: number, top: number) => {
    for (const pane of panes.current) pane?.scrollTo({ left, top });
  };
  const panBy = (dx: number, dy: number) => {
    const first = panes.current[1] ?? panes.current[0];
    if (first) panTo(first.scrollLeft + dx, first.scrollTop + dy);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (event.metaKey || event.ctrlKey || event.altKey) return;
    if (event.shiftKey && key.startsWith('Arrow')) {
      const [dx, dy] = {
        ArrowLeft: [-PAN_STEP, 0],
        ArrowRight: [PAN_STEP, 0],
        ArrowUp: [0, -PAN_STEP],
        ArrowDown: [0, PAN_STEP],
      }[key] ?? [0, 0];
      panBy(dx!, dy!);
    } else if (key === 'Escape' || key === ' ') props.onClose();
    else if (key === 'a') props.onDecide('approved');
    else if (key === 'x') props.onDecide('rejected');
    else if (key === 'r') props.onRedo();
    else if (key === 'u') props.onUndo?.();
    else if (key === 'ArrowRight') props.onMove(1);
    else if (key === 'ArrowLeft') props.onMove(-1);
    else if (key === 'f' || key === '0') setZoom('fit');
    else if (key === '1') setZoom(1);
    else if (key === '2') setZoom(2);
    else if (key === 'Tab') return;
    else return;
    event.preventDefault();
  };

  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    if (zoom === 'fit') return;
    drag.current = {
      x: event.clientX,
      y: event.clientY,
      left: event.currentTarget.scrollLeft,
      top: event.currentTarget.scrollTop,
    };
    event.currentTarget.setPointerCapture(event.pointerId);
  };
  const onPointerMove = (event: PointerEvent<HTMLDivElement>) => {
    if (!drag.current) return;
    panTo(
      drag.current.left - (event.clientX - drag.current.x),
      drag.current.top - (event.clientY - drag.current.y),
    );
  };
  const onPointerUp = () => {
    drag.current = null;
  };

  const name = item?.name ?? 'source photo';
  const shot = result.shotId ?? `result ${result.n + 1}`;
  const imageStyle = (img: HTMLImageElement | null) => {
    if (!img || zoom === 'fit' || !img.naturalWidth) return;
    img.style.width = `${img.naturalWidth * zoom}px`;
    img.style.height = `${img.naturalHeight * zoom}px`;
  };
  const pane = (index: number, child: React.ReactNode, checker: boolean) => (
    <div
      ref={(el) => {
        panes.current[index] = el;
      }}
      className={`loupe-pane${zoom === 'fit' ? ' fit' : ''}${checker && background === 'checker' ? ' checker' : ''}`}
      style={
        checker && background !== 'checker'
          ? { background: background === 'grey' ? '#808080' : background }
          : undefined
      }
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onScroll={(e) => {
        if (drag.current) return;
        const other = panes.current[1 - index];
        if (
          other &&
          (other.scrollLeft !== e.currentTarget.scrollLeft ||
            other.scrollTop !== e.currentTarget.scrollTop)
        )
          other.scrollTo({ left: e.currentTarget.scrollLeft, top: e.currentTarget.scrollTop });
      }}
    >
      {child}
    </div>
  );

  return (
    <div
      className="overlay"
      role="dialog"
      aria-modal="true"
      aria-label="Compare before and after"
      tabIndex={-1}
      ref={dialog}
      onKeyDown={onKeyDown}
    >
      <div className="loupe">
        <div className="loupe-bar">
          <strong>
            {name} · {shot}
          </strong>
          <span>
            {props.position.index + 1} of {props.position.total} · {result.review}
            {props.preview ? ' · offline preview (not an AI photo)' : ''}
          </span>
          <span role="group" aria-label="Zoom" className="loupe-bar">
            {(['fit', 1, 2] as const).map((z) => (
              <button
                key={String(z)}
                type="button"
                aria-pressed={zoom === z}
                onClick={() => setZoom(z)}
              >
                {z === 'fit' ? 'Fit' : `${z * 100}%`} <kbd>{z === 'fit' ? 'F' : z}</kbd>
              </button>
            ))}
          </span>
          <label>
            Background
            <select
              value={background}
              onChange={(e) => setBackground(e.target.value as Background)}
            >
              {Object.entries(BACKGROUNDS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            onClick={() => props.onMove(-1)}
            disabled={props.position.index === 0}
          >
            Previous <kbd>←</kbd>
          </button>
          <button
            type="button"
            onClick={() => props.onMove(1)}
            disabled={props.position.index >= props.position.total - 1}
          >
            Next <kbd>→</kbd>
          </button>
          <button type="button" onClick={() => props.onDecide('approved')}>
            Approve <kbd>A</kbd>
          </button>
          <button type="button" onClick={() => props.onDecide('rejected')}>
            Reject <kbd>X</kbd>
          </button>
          <button type="button" onClick={props.onRedo}>
            Redo <kbd>R</kbd>
          </button>
          <button type="button" onClick={props.onUndo} disabled={!props.onUndo}>
            Undo <kbd>U</kbd>
          </button>
          <button type="button" onClick={props.onClose}>
            Close <kbd>Esc</kbd>
          </button>
        </div>
        <div className="compare">
          <figure>
            {pane(
              0,
              <img
                key={`${result.itemId}-${zoom}`}
                ref={imageStyle}
                onLoad={(e) => imageStyle(e.currentTarget)}
                src={studio().sourceUrl(result.itemId)}
                alt={`Source photo ${name}`}
                draggable={false}
              />,
              false,
            )}
            <figcaption>Before: {name}</figcaption>
          </figure>
          <figure>
            {pane(
              1,
              result.mime.startsWith('video/') ? (
                <video src={studio().libraryUrl(result.file)} controls autoPlay loop muted />
              ) : (
                <img
                  key={`${result.id}-${zoom}`}
                  ref={imageStyle}
                  onLoad={(e) => imageStyle(e.currentTarget)}
                  src={studio().libraryUrl(result.file)}
                  alt={`Result ${shot} of ${name}`}
                  draggable={false}
                />
              ),
              true,
            )}
            <figcaption>
              After: {shot} of {name}
            </figcaption>
          </figure>
        </div>
      </div>
    </div>
  );
}
