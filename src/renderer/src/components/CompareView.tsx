import { useEffect, useRef, type KeyboardEvent } from 'react';
import type { ResultView, ReviewState } from '../../../shared/studio';
import { useQueue } from '../stores/queue-store';
import { studio } from '../transport';

/** Before (the dropped photo) and after (the result), full size; A/X decide, Escape closes. */
export function CompareView({ result, onClose, onDecide }: { result: ResultView; onClose(): void; onDecide(review: ReviewState): void }) {
  const item = useQueue((s) => s.items[result.itemId]);
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => dialog.current?.focus(), []);
  const onKeyDown = (event: KeyboardEvent) => {
    const key = event.key.toLowerCase();
    if (key === 'escape' || key === ' ') onClose();
    else if (key === 'a' || key === 'x') {
      onDecide(key === 'a' ? 'approved' : 'rejected');
      onClose();
    } else return;
    event.preventDefault();
  };
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Compare before and after" tabIndex={-1} ref={dialog} onKeyDown={onKeyDown}>
      <div className="compare">
        <figure>
          <img src={studio().sourceUrl(result.itemId)} alt={`Source photo ${item?.name ?? ''}`} />
          <figcaption>Before: {item?.name ?? 'source photo'}</figcaption>
        </figure>
        <figure>
          {result.mime.startsWith('video/') ? <video src={studio().libraryUrl(result.file)} controls autoPlay loop muted /> : <img src={studio().libraryUrl(result.file)} alt="Result" />}
          <figcaption>After: {result.shotId ?? `result ${result.n + 1}`}</figcaption>
        </figure>
      </div>
      <button type="button" onClick={onClose}>
        Close <kbd>Esc</kbd>
      </button>
    </div>
  );
}
