import { useEffect, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { REVIEW_STATES, type ResultView, type ReviewState } from '../../../shared/studio';
import { CompareView } from '../components/CompareView';
import { EmptyState } from '../components/EmptyState';
import { ReviewGrid } from '../components/ReviewGrid';
import { useCatalog } from '../stores/catalog-store';
import { useResults, visibleResults, type ReviewFilter } from '../stores/results-store';
import { act, useUi } from '../stores/ui-store';

export function ReviewScreen() {
  const filter = useResults((s) => s.filter);
  const shown = useResults(useShallow((s) => visibleResults(s.results, s.filter)));
  const focusedId = useResults((s) => s.focusedId);
  const selected = useResults((s) => s.selected);
  const [zoomed, setZoomed] = useState(false);
  const focused = shown.find((r) => r.id === focusedId) ?? null;

  // Keep a focused result whenever there is one to show (after culling, the next one).
  useEffect(() => {
    if (!focused && shown.length) useResults.getState().focus(shown[0]!.id);
  }, [focused, shown]);

  const targets = (): string[] => {
    const ids = Object.keys(selected);
    return ids.length ? ids : focused ? [focused.id] : [];
  };
  const decide = (review: ReviewState) => {
    const ids = targets();
    if (ids.length === 0) return;
    const index = shown.findIndex((r) => r.id === focused?.id);
    const next = filter === 'all' || filter === review ? shown[index + 1] : shown.filter((r) => !ids.includes(r.id))[index];
    act(async () => {
      await useResults.getState().review(ids, review);
      useResults.getState().clearSelection();
      useResults.getState().focus(next?.id ?? null);
    });
  };
  const redo = () => {
    const ids = targets();
    if (ids.length === 0) return;
    act(async () => {
      const queued = await useResults.getState().redo(ids);
      useResults.getState().clearSelection();
      useUi.getState().notify(`${queued} photo${queued === 1 ? '' : 's'} queued again with the same recipe`);
    });
  };
  const saveLook = () => {
    if (!focused) return;
    const label = window.prompt('Name this look', `Look ${new Date().toLocaleDateString()}`);
    if (!label) return;
    act(async () => {
      await useCatalog.getState().saveLook(focused.id, label);
      useUi.getState().notify(`Saved the look “${label}”`);
    });
  };
  const move = (step: number) => {
    const index = shown.findIndex((r) => r.id === focused?.id);
    const next = shown[Math.min(shown.length - 1, Math.max(0, index + step))];
    if (next) useResults.getState().focus(next.id);
  };
  const pendingShown = useMemo(() => shown.filter((r) => r.review === 'pending').map((r) => r.id), [shown]);

  return (
    <section aria-label="Review" className="review">
      <div className="toolbar">
        <label>
          Show
          <select value={filter} onChange={(e) => useResults.getState().setFilter(e.target.value as ReviewFilter)}>
            {[...REVIEW_STATES, 'all' as const].map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
        <button type="button" disabled={!focused} onClick={() => decide('approved')}>
          Approve <kbd>A</kbd>
        </button>
        <button type="button" disabled={!focused} onClick={() => decide('rejected')}>
          Reject <kbd>X</kbd>
        </button>
        <button type="button" disabled={!focused} onClick={redo}>
          Redo <kbd>R</kbd>
        </button>
        <button type="button" disabled={!focused} onClick={() => setZoomed(true)}>
          Compare <kbd>Space</kbd>
        </button>
        <button type="button" disabled={pendingShown.length === 0} onClick={() => act(() => useResults.getState().review(pendingShown, 'approved'))}>
          Approve all shown ({pendingShown.length})
        </button>
        <button type="button" disabled={!focused} onClick={saveLook}>
          Save look
        </button>
        <span className="muted">{Object.keys(selected).length ? `${Object.keys(selected).length} selected` : `${shown.length} ${filter === 'all' ? 'results' : filter}`}</span>
      </div>
      {shown.length === 0 ? (
        <EmptyState title={filter === 'pending' ? 'Nothing to review' : `No ${filter} results`}>
          {filter === 'pending' ? 'Finished shots land here. Approve with A, reject with X; approved shots are exported.' : 'Choose another filter above.'}
        </EmptyState>
      ) : (
        <ReviewGrid
          results={shown}
          focusedId={focused?.id ?? null}
          selected={selected}
          onFocus={(id) => useResults.getState().focus(id)}
          onToggle={(id) => useResults.getState().toggleSelected(id)}
          onKey={(key, columns) => {
            if (key === 'a') decide('approved');
            else if (key === 'x') decide('rejected');
            else if (key === 'r') redo();
            else if (key === ' ') setZoomed(true);
            else if (key === 'ArrowRight') move(1);
            else if (key === 'ArrowLeft') move(-1);
            else if (key === 'ArrowDown') move(columns);
            else if (key === 'ArrowUp') move(-columns);
            else return false;
            return true;
          }}
        />
      )}
      {zoomed && focused && <CompareView result={focused} onClose={() => setZoomed(false)} onDecide={decide} />}
    </section>
  );
}

export type { ResultView };
