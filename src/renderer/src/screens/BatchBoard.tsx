import { useEffect, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import {
  HELD_UNSENT,
  ITEM_STATES,
  TERMINAL_STATES,
  type BudgetView,
  type ItemState,
  type ItemView,
  type StudioCommandResults,
  type WaitReason,
} from '../../../shared/studio';
import { ConfirmDialog } from '../components/Dialog';
import { EmptyState } from '../components/EmptyState';
import { Progress } from '../components/Progress';
import { attemptsOf, retryIdsOf } from '../attempts';
import { diamondCount, folderName, itemPrice, photoCount, recipeName, sentence } from '../names';
import {
  boardState,
  etaText,
  heldByDailyCap,
  hiddenPaid,
  PLAN_HOLDS,
  progressOf,
  topUpWhere,
} from '../progress';
import { requestsLeftText } from '../requests-left';
import { useCatalog } from '../stores/catalog-store';
import { useFolders } from '../stores/folders-store';
import { selectOrderedItems, useQueue } from '../stores/queue-store';
import { useResults } from '../stores/results-store';
import { act, useUi } from '../stores/ui-store';
import { studio } from '../transport';

const STEP: Record<ItemState, number> = {
  queued: 0,
  uploading: 1,
  submitting: 2,
  processing: 3,
  downloading: 4,
  review: 5,
  exporting: 6,
  exported: 7,
  failed: 7,
  rejected: 7,
  skipped: 7,
  cancelled: 7,
};
const WAIT_TEXT: Record<WaitReason, string> = {
  paused: 'Paused: its folder is paused.',
  no_diamonds: 'Not enough diamonds: resumes when the balance allows.',
  daily_cap: 'Daily request cap reached: resumes at the next UTC day.',
  offline: 'Service unreachable: retrying.',
  service_error: 'Service error: retrying with backoff.',
  // Held before the next charge would cross it, not once reached (40 of 42 spent said "reached").
  ceiling: 'The next photo would cross the folder’s diamond ceiling: raise it to go on.',
  uncertain: 'Submission uncertain: check the service, then resubmit or mark it failed.',
  jobs_hidden:
    'Not started: the service refuses to show paid jobs (often a plan paused or unpaid). Nothing is sent for it until the service shows them again.',
};
const WORKING_TEXT: Partial<Record<ItemState, string>> = {
  uploading: 'Uploading the photo.',
  submitting: 'Sending the job.',
  processing: 'At the service: being made.',
  downloading: 'Downloading the results.',
  review: 'Waiting for your review.',
  exporting: 'Writing the approved files.',
};
const DONE_TEXT: Partial<Record<ItemState, string>> = {
  exported: 'Exported.',
  cancelled: 'Cancelled: nothing more is charged for it.',
  skipped: 'Skipped: nothing spent.',
};
/** The state filter's groups: what an operator looks for in a long queue. */
const STATE_FILTERS = {
  all: { label: 'All states', states: ITEM_STATES },
  // Not a state: what only the operator can move on (see needsYou).
  needs: { label: 'Needs you', states: [] },
  waiting: { label: 'Waiting', states: ['queued'] },
  working: {
    label: 'Working',
    states: ['uploading', 'submitting', 'processing', 'downloading', 'exporting'],
  },
  review: { label: 'To review', states: ['review'] },
  exported: { label: 'Exported', states: ['exported'] },
  rejected: { label: 'Rejected', states: ['rejected'] },
  failed: { label: 'Failed', states: ['failed'] },
  other: { label: 'Skipped or cancelled', states: ['skipped', 'cancelled'] },
} as const satisfies Record<string, { label: string; states: readonly ItemState[] }>;
type StateFilter = keyof typeof STATE_FILTERS;
const UNPAID: readonly ItemState[] = ['queued', 'uploading', 'submitting'];
/**
 * Its create went out and the answer was lost: the service may have charged it. Not "to pay" (nor
 * in "To spend"), and not spent either, until the service tells.
 */
const maybePaid = (item: ItemView) =>
  item.diamonds === 0 && !item.jobId && (item.uncertain || item.maybeCharged === true);
/**
 * The state a row shows and is counted and filtered by: a photo held before its create was taken
 * (a 402 leaves it at "submitting") waits its turn like a queued one, and reads so, not as a step
 * under way for minutes (review uirev30 walkthrough: three rows "submitting" beside "Not enough
 * diamonds"). One that may be paid already keeps its step.
 */
const rowState = (item: ItemView): ItemState =>
  (item.state === 'uploading' || item.state === 'submitting') &&
  item.waitReason !== null &&
  HELD_UNSENT.includes(item.waitReason) &&
  !item.jobId &&
  !item.uncertain &&
  !maybePaid(item)
    ? 'queued'
    : boardState(item);
/** The plan's status when the engine found the plan, not the diamonds, refusing the photo. */
const planRefusing = (item: ItemView): string | null =>
  PLAN_HOLDS.exec(item.error ?? '')?.[1] ?? null;
const planRefusingText = (plan: string) =>
  `Refused although the balance covers it: the account’s plan is ${plan}. Adding diamonds will not help; settle the plan with the service, and it goes on by itself.`;
/** A paid photo whose polls the service refuses: not an error to wait out, the account to settle. */
const HIDDEN_PAID_TEXT =
  'Paid for: the service refuses to show paid jobs (often a plan paused or unpaid), so its result cannot be collected yet. Settle the account with the service: the studio asks now and then and collects it then, with no new charge.';
/** A photo that may be paid, held while the account is short: the studio never pays it twice. */
const MAYBE_PAID_SHORT_TEXT =
  'Sent, but the service’s answer was lost: it may be paid already. The account is short of diamonds; the studio asks the service about it once the balance allows, and does not pay it twice.';
const PAGE = 300;
/** After a bad file's own reason (not a photo, cut short): what happened to it and what to do. */
const BAD_FILE_TEXT =
  'Nothing was sent or spent; it was moved to failed/. Put a good copy in the folder to make it.';

/**
 * What waits on the operator, whatever its state: an uncertain submission (a "submitting" row
 * under no filter before: review uirev B9), a folder's ceiling reached, the account short, failed.
 */
const needsYou = (item: ItemView) =>
  item.uncertain ||
  boardState(item) === 'failed' ||
  item.waitReason === 'uncertain' ||
  item.waitReason === 'ceiling' ||
  item.waitReason === 'no_diamonds';

export function BatchBoard() {
  const items = useQueue(useShallow(selectOrderedItems));
  const budget = useQueue((s) => s.budget);
  const paused = useQueue((s) => s.paused);
  const folders = useFolders((s) => s.folders);
  const catalog = useCatalog((s) => s.catalog);
  const looks = useCatalog((s) => s.looks);
  const results = useResults((s) => s.results);
  const topUp = topUpWhere(useCatalog((s) => s.account));
  const [stateFilter, setStateFilter] = useState<StateFilter>('all');
  const [folderFilter, setFolderFilter] = useState<string>('all');
  const [limit, setLimit] = useState(PAGE);
  const [confirming, setConfirming] = useState<
    ({ ids: string[] } & StudioCommandResults['queue.retryPrice']) | null
  >(null);
  const [resubmitting, setResubmitting] = useState<ItemView | null>(null);
  // A photo in review holds a paid result: cancelling it is confirmed, saying what it leaves.
  const [cancellingReview, setCancellingReview] = useState<ItemView | null>(null);

  // First result thumbnail per item, and which items hold results already paid for.
  const resultOf = useMemo(() => {
    const map = new Map<string, { thumb: string | null; file: string }>();
    for (const r of Object.values(results))
      if (!map.has(r.itemId)) map.set(r.itemId, { thumb: r.thumb, file: r.file });
    return map;
  }, [results]);
  const price = (item: ItemView) => itemPrice(item, catalog, looks);
  const unpaid = (item: ItemView) =>
    UNPAID.includes(item.state) && !item.jobId && item.diamonds === 0 && !maybePaid(item);
  // One row per photo: a redo's earlier item is the photo's history, not a second photo (uirev C4).
  // Its charge stays in "Spent"; counts, progress and filters are of the photos.
  const { current, earlier } = useMemo(() => attemptsOf(items), [items]);
  const spent = items.reduce((sum, i) => sum + i.diamonds, 0);
  const toSpend = current.filter(unpaid).reduce((sum, i) => sum + (price(i) ?? 0), 0);
  const progress = progressOf(current);
  const capReached = current.some((i) => i.waitReason === 'daily_cap');
  const left = budget?.requestsLeftToday ?? null;
  const requestsLeft =
    requestsLeftText(budget) ??
    (capReached
      ? 'none (the service’s cap is reached)'
      : `no cap set · ${budget?.requestsUsedToday ?? 0} used`);
  const failed = current.filter((i) => i.state === 'failed' || i.failedShots.length > 0);
  const exportable = failed.filter((i) => i.state === 'failed' && resultOf.has(i.id));
  // With the failed shots of earlier attempts, which only their photo's row shows now.
  const regenerable = current.filter(
    (i) => !exportable.includes(i) && retryIdsOf(i, earlier.get(i.id)).length > 0,
  );
  const regenerableIds = regenerable.flatMap((i) => retryIdsOf(i, earlier.get(i.id)));
  const queuedAhead = useMemo(() => {
    const ahead = new Map<string, number>();
    let n = 0;
    for (const item of current)
      if (item.state === 'queued' && !item.waitReason) ahead.set(item.id, n++);
    return ahead;
  }, [current]);
  const counts = useMemo(() => {
    const c = Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
    for (const item of current) c[rowState(item)]++;
    return c;
  }, [current]);
  const needingYou = current.filter(needsYou).length;
  const shown = current.filter(
    (i) =>
      (stateFilter === 'needs'
        ? needsYou(i)
        : (STATE_FILTERS[stateFilter].states as readonly ItemState[]).includes(rowState(i))) &&
      (folderFilter === 'all' ||
        (folderFilter === 'none' ? i.folderId === null : i.folderId === folderFilter)),
  );

  // Priced by the studio from what the retry will do: a job already paid is collected, not paid again.
  const generateAgain = (ids: string[]) =>
    act(async () => setConfirming({ ids, ...(await studio().call('queue.retryPrice', { ids })) }));
  const exportAgain = (ids: string[]) =>
    act(async () => {
      const changed = await useQueue.getState().exportAgain(ids);
      useUi
        .getState()
        .notify(
          `${changed} photo${changed === 1 ? '' : 's'} exported again with the folder’s current export settings; nothing charged.`,
        );
    });

  // A photo whose results were all declined: its way back is in Review (approve it, or redo it
  // there, priced), where the board's row did not lead (review uirev30 walkthrough).
  const reviewAgain = (itemId: string) => {
    const first = Object.values(results).find((r) => r.itemId === itemId);
    useResults.getState().setFilter('rejected');
    if (first) useResults.getState().focus(first.id);
    useUi.getState().show('review');
  };

  if (items.length === 0) {
    return (
      <EmptyState title="Nothing in the queue">
        Photos dropped into a hot folder appear here as they are picked up.
      </EmptyState>
    );
  }
  return (
    <section aria-label="Batch board">
      <div className="stats" role="group" aria-label="Budget">
        <Stat label="Diamonds left" value={balanceText(budget)} />
        <Stat label="Spent" value={spent} />
        <Stat label="To spend" value={toSpend} />
        <Stat label="Requests left today" value={requestsLeft} />
        <Stat label="ETA" value={etaText(progress, paused, heldByDailyCap(current), topUp)} />
      </div>
      <div className="folder-stats">
        <Progress
          value={progress.done}
          max={progress.total}
          label={`All photos: ${progress.done} of ${progress.total} finished`}
        />
        <span data-testid="board-progress">
          {progress.done} of {progress.total} finished
          {progress.toReview ? ` · ${progress.toReview} to review` : ''}
          {progress.failed ? ` · ${progress.failed} failed` : ''}
        </span>
      </div>
      <BatchSummaries items={items} paused={paused} />
      <div className="toolbar">
        <button type="button" onClick={() => act(() => useQueue.getState().setPaused(!paused))}>
          {paused ? 'Resume all' : 'Pause all'}
        </button>
        <button
          type="button"
          disabled={exportable.length === 0}
          onClick={() => exportAgain(exportable.map((i) => i.id))}
        >
          Export again ({exportable.length}, free)
        </button>
        <button
          type="button"
          disabled={regenerable.length === 0}
          onClick={() => generateAgain(regenerableIds)}
        >
          Generate again ({regenerable.length})…
        </button>
        <div className="filters">
          <label>
            State
            <select
              value={stateFilter}
              onChange={(e) => setStateFilter(e.target.value as StateFilter)}
            >
              {Object.entries(STATE_FILTERS).map(([value, f]) => (
                <option key={value} value={value}>
                  {value === 'needs' ? `${f.label} (${needingYou})` : f.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Folder
            <select value={folderFilter} onChange={(e) => setFolderFilter(e.target.value)}>
              <option value="all">All folders</option>
              {folders.map((f) => (
                <option key={f.id} value={f.id}>
                  {folderName(f.path)}
                </option>
              ))}
              <option value="none">No folder (runs, removed folders)</option>
            </select>
          </label>
        </div>
        <span className="muted">
          {ITEM_STATES.filter((s) => counts[s] > 0)
            .map((s) => `${counts[s]} ${s}`)
            .join(' · ')}
        </span>
      </div>
      <table className="items" aria-label="Photos">
        <thead>
          <tr>
            <th scope="col">
              <span className="visually-hidden">Thumbnail</span>
            </th>
            <th scope="col">Photo</th>
            <th scope="col">Folder · recipe</th>
            <th scope="col">State</th>
            <th scope="col">Progress</th>
            <th scope="col">Why it waits / what happened</th>
            <th scope="col">Diamonds</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {shown.slice(0, limit).map((item) => {
            const folder = folders.find((f) => f.id === item.folderId);
            const result = resultOf.get(item.id);
            const cost = price(item);
            const reason = item.waitReason
              ? hiddenPaid(item)
                ? HIDDEN_PAID_TEXT
                : item.waitReason === 'no_diamonds' && maybePaid(item)
                  ? MAYBE_PAID_SHORT_TEXT
                  : item.waitReason === 'no_diamonds' && planRefusing(item)
                    ? planRefusingText(planRefusing(item)!)
                    : item.waitReason === 'no_diamonds'
                      ? `Not enough diamonds: ${topUp}; it resumes by itself once the balance allows.`
                      : item.waitReason === 'ceiling' && folder?.maxDiamonds != null
                        ? `The next photo would cross the folder’s diamond ceiling of ${folder.maxDiamonds}: raise it to go on.`
                        : item.waitReason === 'daily_cap'
                          ? capText(item, left)
                          : item.waitReason === 'uncertain'
                            ? uncertainText(cost)
                            : WAIT_TEXT[item.waitReason]
              : item.state === 'queued'
                ? paused
                  ? 'Paused: press “Resume all”.'
                  : folder?.paused
                    ? 'Paused: its folder is paused.'
                    : queuedAhead.get(item.id)
                      ? `In line: ${queuedAhead.get(item.id)} photo${queuedAhead.get(item.id) === 1 ? '' : 's'} ahead.`
                      : 'Next in line.'
                : item.badFile
                  ? `${sentence(item.error ?? 'Not a usable photo.')} ${BAD_FILE_TEXT}`
                  : item.error
                    ? sentence(item.error)
                    : item.note
                      ? sentence(item.note)
                      : (WORKING_TEXT[item.state] ?? DONE_TEXT[item.state] ?? '');
            return (
              <tr key={item.id} data-state={item.state} data-item={item.id}>
                <td>
                  {result ? (
                    <img
                      className="thumb checker"
                      src={studio().libraryUrl(result.thumb ?? result.file)}
                      alt=""
                      width={48}
                      height={48}
                      loading="lazy"
                    />
                  ) : TERMINAL_STATES.includes(item.state) ? (
                    <span className="thumb" />
                  ) : (
                    <img
                      className="thumb"
                      src={studio().sourceUrl(item.id)}
                      alt=""
                      width={48}
                      height={48}
                      loading="lazy"
                      onError={(e) => (e.currentTarget.style.visibility = 'hidden')}
                    />
                  )}
                </td>
                <td>
                  {item.relativeDir ? <span className="muted">{item.relativeDir}/</span> : null}
                  {item.name}
                  <EarlierAttempts attempts={earlier.get(item.id)} />
                </td>
                <td>
                  {folder ? folderName(folder.path) : <span className="muted">no folder</span>}
                  <div className="muted small">{recipeName(item.recipe, catalog, looks)}</div>
                </td>
                <td>
                  <span className={`state state-${rowState(item)}`}>
                    {item.badFile ? 'bad file' : rowState(item)}
                  </span>
                  {item.uncertain ? (
                    <>
                      {' '}
                      <span className="state state-attention">needs you</span>
                    </>
                  ) : null}
                </td>
                <td>
                  <Progress value={STEP[rowState(item)]} max={7} label={`${item.name} progress`} />
                  {item.packTotal ? (
                    <small className="muted">
                      {' '}
                      {item.packCompleted ?? 0}/{item.packTotal} shots
                    </small>
                  ) : null}
                </td>
                <td className={boardState(item) === 'failed' ? 'problem' : ''}>
                  {reason}
                  {item.waitReason === 'uncertain' && item.note ? (
                    // The engine's own account (keys, probes) for whoever checks the service.
                    <details className="small">
                      <summary>Details</summary>
                      {sentence(item.note)}
                    </details>
                  ) : null}
                </td>
                <td>
                  {item.diamonds > 0 || item.jobId
                    ? `${item.diamonds} spent`
                    : maybePaid(item)
                      ? `may be paid (${cost ?? '?'})`
                      : UNPAID.includes(item.state)
                        ? `${cost ?? '?'} to pay`
                        : '0'}
                </td>
                <td>
                  <div className="row-actions">
                    {item.uncertain && (
                      <>
                        <button
                          type="button"
                          aria-label={`Resubmit… ${item.name}`}
                          onClick={() => setResubmitting(item)}
                        >
                          Resubmit…
                        </button>
                        <button
                          type="button"
                          aria-label={`Mark failed ${item.name}`}
                          onClick={() =>
                            act(async () => {
                              await useQueue.getState().resolveUncertain(item.id, 'fail');
                            })
                          }
                        >
                          Mark failed
                        </button>
                      </>
                    )}
                    {item.state === 'queued' && (
                      <button
                        type="button"
                        aria-label={`Move to front ${item.name}`}
                        onClick={() => act(() => useQueue.getState().moveToFront([item.id]))}
                      >
                        Move to front
                      </button>
                    )}
                    {/* Held unsent (a 402 left it at "submitting"): nothing paid, so it may go. */}
                    {(rowState(item) === 'queued' ||
                      item.state === 'uploading' ||
                      item.state === 'review') && (
                      <button
                        type="button"
                        aria-label={`Cancel ${item.name}`}
                        onClick={() =>
                          item.state === 'review'
                            ? setCancellingReview(item)
                            : act(() => useQueue.getState().cancel([item.id]))
                        }
                      >
                        Cancel
                      </button>
                    )}
                    {rowState(item) === 'rejected' && resultOf.has(item.id) && (
                      <button
                        type="button"
                        aria-label={`Review again ${item.name}`}
                        onClick={() => reviewAgain(item.id)}
                      >
                        Review again
                      </button>
                    )}
                    {item.state === 'failed' && resultOf.has(item.id) && (
                      <button
                        type="button"
                        aria-label={`Export again ${item.name}`}
                        onClick={() => exportAgain([item.id])}
                      >
                        Export again
                      </button>
                    )}
                    <RetryButton
                      item={item}
                      ids={retryIdsOf(item, earlier.get(item.id))}
                      onPress={generateAgain}
                    />
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {shown.length > limit && (
        <p>
          <button type="button" onClick={() => setLimit(limit + PAGE)}>
            Show {Math.min(PAGE, shown.length - limit)} more of {shown.length - limit}
          </button>
        </p>
      )}
      {cancellingReview && (
        <ConfirmDialog
          title={`Cancel ${cancellingReview.name}?`}
          confirmLabel="Cancel the photo"
          cancelLabel="Keep it for review"
          onCancel={() => setCancellingReview(null)}
          onConfirm={() => {
            const { id } = cancellingReview;
            setCancellingReview(null);
            act(() => useQueue.getState().cancel([id]));
          }}
        >
          <p>
            Its result is already made and paid for
            {cancellingReview.diamonds > 0 ? ` (${diamondsText(cancellingReview.diamonds)})` : ''}:
            cancelling does not refund it. The photo leaves the batch and its result is not
            exported, even if you approve it in Review.
          </p>
          <p>To get it back later, “Generate again…” collects the same result at no charge.</p>
        </ConfirmDialog>
      )}
      {resubmitting && (
        <ConfirmDialog
          title={`Resubmit ${resubmitting.name}?`}
          confirmLabel={`Resubmit for ${diamondsText(price(resubmitting))}`}
          onCancel={() => setResubmitting(null)}
          onConfirm={() => {
            const { id, name } = resubmitting;
            setResubmitting(null);
            act(async () => {
              const taken = await useQueue.getState().resolveUncertain(id, 'resubmit');
              useUi
                .getState()
                .notify(
                  taken
                    ? `${name} resubmitted.`
                    : `${name} was resubmitted once already: check the service, then mark it failed.`,
                );
            });
          }}
        >
          <p>
            Whether the service charged the first submission is not known (the board says why). If
            it did, resubmitting pays about <strong>{diamondsText(price(resubmitting))}</strong>{' '}
            again: check the service’s balance or its job list first.
          </p>
          <p>
            A photo is resubmitted once at most. “Mark failed” gives it up without sending it again
            (what the first submission may have cost stays spent).
          </p>
        </ConfirmDialog>
      )}
      {confirming && (
        <ConfirmDialog
          title={`Generate ${photoCount(confirming.ids.length)} again?`}
          confirmLabel={
            confirming.charged === 0
              ? 'Collect again (free)'
              : `Generate again for ${diamondsText(confirming.diamonds)}`
          }
          onCancel={() => setConfirming(null)}
          onConfirm={() => {
            const { ids, charged, collected } = confirming;
            setConfirming(null);
            act(async () => {
              await useQueue.getState().retry(ids);
              const parts = [
                ...(charged ? [`${photoCount(charged)} queued to be generated again`] : []),
                ...(collected ? [`${photoCount(collected)} collected again at no charge`] : []),
              ];
              useUi.getState().notify(`${parts.join('; ') || 'Nothing to generate again'}.`);
            });
          }}
        >
          {confirming.charged > 0 ? (
            <p>
              This sends {photoCount(confirming.charged)} to the service again and costs about{' '}
              <strong>{diamondsText(confirming.diamonds)}</strong>. Results already made are kept.
            </p>
          ) : null}
          {confirming.charged > 0 ? (
            <BalanceBeside
              price={confirming.diamonds}
              ahead={toSpend}
              budget={budget}
              topUp={topUp}
            />
          ) : null}
          {confirming.collected > 0 ? (
            <p>
              {photoCount(confirming.collected)} already paid for{' '}
              {confirming.collected === 1 ? 'is' : 'are'} collected again at no charge: the same job
              is asked again, not paid again.
            </p>
          ) : null}
          <p>To write files that were already made, use “Export again”, which is free.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

const diamondsText = (diamonds: number | null) =>
  diamonds === null ? 'a price not known yet' : diamondCount(diamonds);

/**
 * An uncertain submission in the operator's words (review uirev C2: the row said "Idempotency-Key",
 * "a body it must refuse"): what happened, what Dropshoot does about it, what to do. The engine's
 * account of it stays under Details.
 */
const uncertainText = (cost: number | null) =>
  `Sent, but the service’s answer never came back: it may have charged ${cost === null ? 'for it' : diamondCount(cost)}. ` +
  'Dropshoot does not send it again by itself, so it is never paid twice. ' +
  'Check the balance or the service’s job list: if it was not charged, “Resubmit…” sends it once more; ' +
  'if it was, its result is waiting in the service’s job list, where Dropshoot cannot fetch it: ' +
  'take it from there, then “Mark failed” stops here with nothing more charged.';

/**
 * Why a photo waits for tomorrow, matching the "Requests left today" figure beside it: the studio's
 * own count at the cap, too few requests left to carry this photo to the end, or the service's cap.
 */
function capText(item: ItemView, left: number | null): string {
  // The studio's own words at the service's cap as remembered (the day's last request is kept).
  if (item.error?.includes('closing balance read')) return sentence(item.error);
  if (left === 0 || left === null) return WAIT_TEXT.daily_cap;
  if (item.error?.startsWith('not started: today'))
    return `Too few requests left today (${left}) to carry this photo to the end: it starts at the next UTC day.`;
  return 'The service says its daily request cap is reached: resumes at the next UTC day.';
}

/**
 * The balance beside a price to confirm, when it is known, and plainly when the price is above
 * what it leaves (the dialog named 32 diamonds with 30 left, never saying so: review uirev B11),
 * counting what photos queued before these are to spend from it first (review rev26 5).
 */
function BalanceBeside({
  price,
  ahead,
  budget,
  topUp,
}: {
  price: number | null;
  ahead: number;
  budget: BudgetView | null;
  topUp: string;
}) {
  if (budget?.diamondBalance == null) return null;
  const balance = budget.diamondBalance;
  // " (as of 14:05 UTC)" when the reading is not fresh, as the "Diamonds left" figure says it.
  const held = `${diamondCount(balance)}${balanceText(budget).slice(String(balance).length)}`;
  const queued =
    ahead > 0 ? `, ${diamondCount(ahead)} of it to spend on photos queued before these` : '';
  if (price === null || price + ahead <= balance)
    return (
      <p>
        The account holds {held}
        {queued}.
      </p>
    );
  return (
    <p className="problem" data-testid="over-balance">
      <strong>
        That is more than the account holds ({held}
        {queued}):
      </strong>{' '}
      what the balance does not cover waits, marked “Not enough diamonds”, until you {topUp}.
    </p>
  );
}

/** The studio reads the balance again after this long (engine.budget); older, it was not read again. */
const BALANCE_FRESH_MS = 15_000;

/**
 * The balance, with the time it was read (UTC, like the board's day resets) when the studio
 * answered from a read older than its cache window: a closed day, the request kept for the
 * closing balance read, or no answer.
 */
function balanceText(budget: BudgetView | null): string {
  if (budget?.diamondBalance == null) return '—';
  const readAt = budget.diamondBalanceReadAt;
  if (readAt === null || Date.now() - Date.parse(readAt) <= BALANCE_FRESH_MS)
    return String(budget.diamondBalance);
  return `${budget.diamondBalance} (as of ${readAt.slice(11, 16)} UTC)`;
}

/** Progress, spend and time left per folder (and per run without a folder). */
function BatchSummaries({ items, paused }: { items: ItemView[]; paused: boolean }) {
  const folders = useFolders((s) => s.folders);
  const topUp = topUpWhere(useCatalog((s) => s.account));
  const groups = useMemo(() => {
    const byBatch = new Map<string, ItemView[]>();
    for (const item of items)
      byBatch.set(item.batchId, [...(byBatch.get(item.batchId) ?? []), item]);
    return [...byBatch.entries()];
  }, [items]);
  if (groups.length < 1) return null;
  return (
    <table className="items" aria-label="Batches">
      <thead>
        <tr>
          <th scope="col">Batch</th>
          <th scope="col">Progress</th>
          <th scope="col">Spent</th>
          <th scope="col">ETA</th>
        </tr>
      </thead>
      <tbody>
        {groups.map(([batchId, batchItems]) => {
          const folder = folders.find((f) => f.id === batchItems[0]?.folderId);
          const name = folder ? folderName(folder.path) : 'Run';
          const progress = progressOf(attemptsOf(batchItems).current);
          return (
            <tr key={batchId}>
              <td>{name}</td>
              <td>
                <Progress
                  value={progress.done}
                  max={progress.total}
                  label={`${name}: ${progress.done} of ${progress.total} finished`}
                />{' '}
                {progress.done}/{progress.total}
              </td>
              <td>{batchItems.reduce((sum, i) => sum + i.diamonds, 0)}</td>
              <td>
                {etaText(
                  progress,
                  paused || Boolean(folder?.paused),
                  heldByDailyCap(batchItems),
                  topUp,
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/**
 * A photo's way out once it failed (or lost shots), on its row with what it costs: the studio's
 * plan of the retry (a paid job is collected, not paid again), asked whenever the row changes.
 */
function RetryButton({
  item,
  ids,
  onPress,
}: {
  item: ItemView;
  ids: string[];
  onPress(ids: string[]): void;
}) {
  const key = ids.join(',');
  const [price, setPrice] = useState<{
    key: string;
    plan: StudioCommandResults['queue.retryPrice'];
  } | null>(null);
  useEffect(() => {
    if (!key) return;
    let current = true;
    studio()
      .call('queue.retryPrice', { ids: key.split(',') })
      .then((plan) => current && setPrice({ key, plan }))
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [key, item.updatedAt]);
  if (ids.length === 0) return null;
  const plan = price?.key === key ? price.plan : null;
  const hintId = `retry-price-${item.id}`;
  const earlierShots = ids.filter((id) => id !== item.id).length;
  return (
    <>
      <button
        type="button"
        aria-label={`Generate again… ${item.name}`}
        aria-describedby={plan ? hintId : undefined}
        onClick={() => onPress(ids)}
      >
        Generate again…
      </button>
      {plan ? (
        <span id={hintId} className="muted small" data-testid="retry-price">
          {retryPriceText(plan)}
          {earlierShots > 0
            ? ` · with the failed shots of ${earlierShots === 1 ? 'an earlier attempt' : `${earlierShots} earlier attempts`}`
            : ''}
        </span>
      ) : null}
    </>
  );
}

/** What a retry costs, in the row's few words. */
function retryPriceText(plan: StudioCommandResults['queue.retryPrice']): string {
  if (plan.charged === 0) return plan.collected > 0 ? 'free: collects the paid result' : '';
  const cost =
    plan.diamonds === null ? 'price not known yet' : `about ${diamondCount(plan.diamonds)}`;
  return plan.collected > 0 ? `${cost}, part collected free` : cost;
}

/** A photo's earlier attempts (before a redo), behind a disclosure on its one row. */
function EarlierAttempts({ attempts }: { attempts: ItemView[] | undefined }) {
  if (!attempts?.length) return null;
  return (
    <details className="small" data-testid="earlier-attempts">
      <summary>
        {attempts.length === 1
          ? 'Replaces an earlier attempt'
          : `Replaces ${attempts.length} earlier attempts`}
      </summary>
      <ul>
        {attempts.map((a) => (
          <li key={a.id}>
            {new Date(a.createdAt).toLocaleString()}: {a.state}
            {a.diamonds > 0 ? ` · ${diamondCount(a.diamonds)} spent` : ''}
            {a.error || a.note ? ` · ${sentence(a.error ?? a.note ?? '')}` : ''}
          </li>
        ))}
      </ul>
    </details>
  );
}

function Stat({ label, value }: { label: string; value: string | number }) {
  return (
    <div className="stat">
      <span className="muted">{label}</span>
      <strong>{value}</strong>
    </div>
  );
}
