import { useEffect, useMemo, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import {
  REVIEW_STATES,
  type ResultView,
  type ReviewState,
  type StudioCommandResults,
} from '../../../shared/studio';
import { getTool, isToolId } from '../../../shared/tools';
import { diamondCount, photoCount, sentence } from '../names';
import { CompareView } from '../components/CompareView';
import { ConfirmDialog, PromptDialog } from '../components/Dialog';
import { EmptyState } from '../components/EmptyState';
import { ExportSettingsChanged } from '../components/ExportAgain';
import { usePreviewMode } from '../components/PreviewBanner';
import { ReviewGrid } from '../components/ReviewGrid';
import { useCatalog } from '../stores/catalog-store';
import { useFolders } from '../stores/folders-store';
import { useQueue } from '../stores/queue-store';
import { useResults, visibleResults, type ReviewFilter } from '../stores/results-store';
import { act, useUi } from '../stores/ui-store';
import { studio } from '../transport';

/** The last decision, for Undo (the notice's button, or U). */
type Decision = { ids: string[]; review: ReviewState };

type RedoPrice = StudioCommandResults['review.redoPrice'];

const diamondsText = (diamonds: number | null) =>
  diamonds === null ? 'price not known yet' : `about ${diamondCount(diamonds)}`;

/** What of a redo is not paid: already on its way, or already replaced by a delivered redo. */
function notPaidParts({ alreadyQueued, alreadyRedone }: StudioCommandResults['review.redo']) {
  return [
    ...(alreadyQueued > 0
      ? [
          `${photoCount(alreadyQueued)} already on ${alreadyQueued === 1 ? 'its' : 'their'} way, not queued twice`,
        ]
      : []),
    ...(alreadyRedone > 0
      ? [
          `${photoCount(alreadyRedone)} already redone (a newer result replaced this one), not queued again`,
        ]
      : []),
  ];
}

/**
 * What a redo queued and what it costs (a photo's redo is one new job: a pack, or a shoot whose
 * shots the service does not name, is made whole again), and what was not queued and why.
 */
function redoNotice(answer: StudioCommandResults['review.redo'], results: number): string {
  const queued =
    answer.queued > 0
      ? `${photoCount(answer.queued)} queued again with the same recipe (${diamondsText(answer.diamonds)})`
      : 'Nothing queued';
  const parts = [queued, ...notPaidParts(answer)];
  return `${answer.queued > 0 ? parts.join('; ') : `${queued}: ${parts.slice(1).join('; ') || 'no result to redo'}`}; the old result${results === 1 ? ' is' : 's are'} now rejected.`;
}

/** The price beside the Redo button, for what it would redo now (from the studio's own plan). */
function redoHint(price: RedoPrice): string {
  if (price.queued === 0)
    return price.alreadyRedone > 0
      ? 'Redo: already redone, nothing to pay'
      : 'Redo: already on its way, nothing to pay';
  return `Redo: ${diamondsText(price.diamonds)}${price.whole > 0 ? ', remakes the whole shoot or pack' : ''}`;
}

/** A shoot or pack whose shots are not named separately is one job: redoing one result remakes all. */
const WHOLE_TEXT =
  'Its shots are not named separately, so redoing one result makes its whole shoot or pack again (one job, all its results).';

/** While the studio does not know a price yet (it loads them as it starts), the hint asks again. */
const PRICE_AGAIN_MS = 2000;

const focusGrid = () => document.querySelector<HTMLElement>('[data-testid="review-grid"]')?.focus();

export function ReviewScreen() {
  const filter = useResults((s) => s.filter);
  const shown = useResults(useShallow((s) => visibleResults(s.results, s.filter)));
  const focusedId = useResults((s) => s.focusedId);
  const selected = useResults((s) => s.selected);
  const names = useQueue(
    useShallow((s) => Object.fromEntries(Object.values(s.items).map((i) => [i.id, i.name]))),
  );
  const preview = usePreviewMode();
  // A preset changed after photos were exported: their new export is offered here too (uirev30 1).
  const folders = useFolders((s) => s.folders);
  const [zoomed, setZoomed] = useState(false);
  const [naming, setNaming] = useState(false);
  const [last, setLast] = useState<Decision | null>(null);
  const [confirmingRedo, setConfirmingRedo] = useState<{ ids: string[]; price: RedoPrice } | null>(
    null,
  );
  const [redoPrice, setRedoPrice] = useState<{ key: string; price: RedoPrice } | null>(null);
  const focused = shown.find((r) => r.id === focusedId) ?? null;
  const focusedItem = useQueue((s) => (focused ? s.items[focused.itemId] : undefined));
  const focusedTool = focusedItem?.toolId ?? null;
  // Only some tools' results can become a look (the service's rule): say so instead of failing.
  const saveable = focusedTool !== null && isToolId(focusedTool) && getTool(focusedTool).saveable;

  // Keep a focused result whenever there is one to show (after culling, the next one).
  useEffect(() => {
    if (!focused && shown.length) useResults.getState().focus(shown[0]!.id);
  }, [focused, shown]);
  // Opened from the sidebar, the keys (A, X, arrows, Space) go to the grid at once, not to the nav
  // button pressed: once, when the grid first has results, unless the operator is in a field.
  const gridFocusedOnce = useRef(false);
  useEffect(() => {
    if (gridFocusedOnce.current || !shown.length) return;
    gridFocusedOnce.current = true;
    const active = document.activeElement;
    if (!active || active === document.body || active.closest('nav')) focusGrid();
  }, [shown.length]);
  // The loupe closes by itself when nothing is left to show; the keys go back to the grid.
  useEffect(() => {
    if (zoomed && !focused) {
      setZoomed(false);
      focusGrid();
    }
  }, [zoomed, focused]);

  const targets = (): string[] => {
    const ids = Object.keys(selected);
    return ids.length ? ids : focused ? [focused.id] : [];
  };
  const targetKey = targets().join(',');
  // Asked again when results arrive or are decided: a delivered redo replaces the old result.
  const resultsStamp = useResults((s) =>
    Object.values(s.results)
      .map((r) => r.review[0])
      .join(''),
  );
  // The redo's price before the press: asked of the studio whenever what R would redo changes,
  // from the prices it knows (no request to the service); asked again while they are not known.
  useEffect(() => {
    if (!targetKey) return;
    let timer: ReturnType<typeof setTimeout>;
    let current = true;
    const ask = (after: number) => {
      timer = setTimeout(() => {
        studio()
          .call('review.redoPrice', { resultIds: targetKey.split(',') })
          .then((price) => {
            if (!current) return;
            setRedoPrice({ key: targetKey, price });
            if (price.queued > 0 && price.diamonds === null) ask(PRICE_AGAIN_MS);
          })
          .catch(() => undefined);
      }, after);
    };
    ask(150);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [targetKey, resultsStamp]);
  const shownRedoPrice = redoPrice?.key === targetKey ? redoPrice.price : null;
  const undo = (decision: Decision) =>
    act(async () => {
      const { unexported } = await useResults.getState().review(decision.ids, 'pending');
      setLast(null);
      useUi
        .getState()
        .notify(
          `Undone: ${decision.ids.length} result${decision.ids.length === 1 ? '' : 's'} back to pending${unexported ? `; ${unexported} exported file${unexported === 1 ? '' : 's'} removed` : ''}.`,
        );
    });
  const record = (ids: string[], review: ReviewState) => {
    const decision = { ids, review };
    setLast(decision);
    const count = `${ids.length} result${ids.length === 1 ? '' : 's'}`;
    useUi
      .getState()
      .notify(
        review === 'approved'
          ? `Approved ${count}: exported when its photo is fully decided.`
          : `Rejected ${count}.`,
        { label: 'Undo (U)', run: () => undo(decision) },
      );
  };
  const decide = (review: ReviewState, ids = targets()) => {
    if (ids.length === 0) return;
    const index = shown.findIndex((r) => r.id === focused?.id);
    const next =
      filter === 'all' || filter === review
        ? shown[index + 1]
        : shown.filter((r) => !ids.includes(r.id))[index];
    // The next result is focused with the optimistic decision, not after the studio answers: in
    // between, the decided one has left the shown results and the loupe closed on "nothing to show".
    useResults.getState().focus(next?.id ?? focused?.id ?? null);
    act(async () => {
      await useResults.getState().review(ids, review);
      useResults.getState().clearSelection();
      record(ids, review);
    });
  };
  const runRedo = (ids: string[]) =>
    act(async () => {
      const answer = await useResults.getState().redo(ids);
      useResults.getState().clearSelection();
      // A redo is paid and not undone here; Undo offered after it took back the decision before
      // it instead (review uirev C4): it is the last thing done, so nothing is left to undo.
      setLast(null);
      useUi.getState().notify(redoNotice(answer, ids.length));
    });
  // A paid redo is confirmed with its price first; one that pays nothing goes at once.
  const redo = (ids = targets()) => {
    if (ids.length === 0) return;
    act(async () => {
      const price = await studio().call('review.redoPrice', { resultIds: ids, askPrices: true });
      if (price.queued === 0) runRedo(ids);
      else setConfirmingRedo({ ids, price });
    });
  };
  const saveLook = (label: string) => {
    if (!focused) return;
    setNaming(false);
    act(async () => {
      await useCatalog.getState().saveLook(focused.id, label);
      useUi.getState().notify(`Saved the look “${label}”.`);
    });
  };
  const move = (step: number) => {
    const index = shown.findIndex((r) => r.id === focused?.id);
    const next = shown[Math.min(shown.length - 1, Math.max(0, index + step))];
    if (next) useResults.getState().focus(next.id);
  };
  const range = (id: string) => {
    const from = shown.findIndex((r) => r.id === focused?.id);
    const to = shown.findIndex((r) => r.id === id);
    if (to < 0) return;
    const [a, b] = from < 0 ? [to, to] : [Math.min(from, to), Math.max(from, to)];
    useResults.getState().selectMany(shown.slice(a, b + 1).map((r) => r.id));
  };
  // A cancelled photo's result is never exported: "Approve all" neither counts nor approves it.
  const cancelled = useQueue(
    useShallow((s) =>
      Object.values(s.items)
        .filter((i) => i.state === 'cancelled')
        .map((i) => i.id),
    ),
  );
  const pendingShown = useMemo(
    () =>
      shown.filter((r) => r.review === 'pending' && !cancelled.includes(r.itemId)).map((r) => r.id),
    [shown, cancelled],
  );
  const closeLoupe = () => {
    setZoomed(false);
    // Keyboard culling goes on where it left off, without a click.
    setTimeout(focusGrid, 0);
  };

  return (
    <section aria-label="Review" className="review">
      <div className="toolbar">
        <label>
          Show
          <select
            value={filter}
            onChange={(e) => useResults.getState().setFilter(e.target.value as ReviewFilter)}
          >
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
        <button
          type="button"
          disabled={!focused}
          onClick={() => redo()}
          aria-describedby={shownRedoPrice ? 'redo-price' : undefined}
        >
          Redo <kbd>R</kbd>
        </button>
        {focused && shownRedoPrice ? (
          <span id="redo-price" className="muted small" data-testid="redo-price">
            {redoHint(shownRedoPrice)}
          </span>
        ) : null}
        <button type="button" disabled={!focused} onClick={() => setZoomed(true)}>
          Compare <kbd>Space</kbd>
        </button>
        <button type="button" disabled={!last} onClick={() => last && undo(last)}>
          Undo <kbd>U</kbd>
        </button>
        <button
          type="button"
          disabled={pendingShown.length === 0}
          onClick={() => decide('approved', pendingShown)}
        >
          Approve all shown ({pendingShown.length})
        </button>
        <button
          type="button"
          disabled={!focused || !saveable}
          onClick={() => setNaming(true)}
          aria-describedby="save-look-hint"
        >
          Save look
        </button>
        {focused && !saveable ? (
          <span id="save-look-hint" className="muted small">
            {focusedItem?.kind === 'ready_shoot' ? 'Ready-shoot results' : 'This tool’s results'}{' '}
            cannot be saved as a look.
          </span>
        ) : null}
        <span className="muted">
          {Object.keys(selected).length
            ? `${Object.keys(selected).length} selected`
            : `${shown.length} ${filter === 'all' ? 'results' : filter}`}
        </span>
      </div>
      {folders.map((f) => (
        <ExportSettingsChanged key={f.id} folder={f} />
      ))}
      {shown.length === 0 ? (
        <EmptyState title={filter === 'pending' ? 'Nothing to review' : `No ${filter} results`}>
          {filter === 'pending'
            ? 'Finished shots land here. Approve with A, reject with X; approved shots are exported, and U undoes the last decision.'
            : 'Choose another filter above.'}
        </EmptyState>
      ) : (
        <ReviewGrid
          results={shown}
          focusedId={focused?.id ?? null}
          selected={selected}
          nameOf={(itemId) => names[itemId] ?? 'photo'}
          preview={preview}
          onFocus={(id) => {
            useResults.getState().clearSelection();
            useResults.getState().focus(id);
          }}
          onToggle={(id) => useResults.getState().toggleSelected(id)}
          onRange={range}
          onKey={(key, columns) => {
            if (key === 'a') decide('approved');
            else if (key === 'x') decide('rejected');
            else if (key === 'r') redo();
            else if (key === 'u') {
              if (last) undo(last);
            } else if (key === ' ') setZoomed(true);
            else if (key === 'ArrowRight') move(1);
            else if (key === 'ArrowLeft') move(-1);
            else if (key === 'ArrowDown') move(columns);
            else if (key === 'ArrowUp') move(-columns);
            else return false;
            return true;
          }}
        />
      )}
      {last && shown.length === 0 ? (
        <p className="muted">
          <button type="button" onClick={() => undo(last)}>
            Undo the last decision
          </button>
        </p>
      ) : null}
      {zoomed && focused && (
        <CompareView
          result={focused}
          position={{ index: shown.findIndex((r) => r.id === focused.id), total: shown.length }}
          preview={preview}
          onClose={closeLoupe}
          onDecide={(review) => decide(review, [focused.id])}
          onMove={move}
          onRedo={() => redo([focused.id])}
          {...(last ? { onUndo: () => undo(last) } : {})}
        />
      )}
      {confirmingRedo && (
        <ConfirmDialog
          title={`Redo ${confirmingRedo.ids.length} result${confirmingRedo.ids.length === 1 ? '' : 's'}?`}
          confirmLabel={
            confirmingRedo.price.diamonds === null
              ? 'Redo (price not known yet)'
              : `Redo for ${diamondCount(confirmingRedo.price.diamonds)}`
          }
          onCancel={() => setConfirmingRedo(null)}
          onConfirm={() => {
            const { ids } = confirmingRedo;
            setConfirmingRedo(null);
            runRedo(ids);
          }}
        >
          <p>
            This sends {photoCount(confirmingRedo.price.queued)} to the service again with the same
            recipe and costs <strong>{diamondsText(confirmingRedo.price.diamonds)}</strong>. The old
            result{confirmingRedo.ids.length === 1 ? ' is' : 's are'} declined.
          </p>
          {confirmingRedo.price.whole > 0 ? <p>{WHOLE_TEXT}</p> : null}
          {notPaidParts(confirmingRedo.price).map((part) => (
            <p key={part}>{sentence(part)}</p>
          ))}
        </ConfirmDialog>
      )}
      {naming && focused && (
        <PromptDialog
          title="Save this look"
          label="Name"
          initial={`Look ${new Date().toLocaleDateString()}`}
          submitLabel="Save look"
          onSubmit={saveLook}
          onCancel={() => setNaming(false)}
        />
      )}
    </section>
  );
}

export type { ResultView };
