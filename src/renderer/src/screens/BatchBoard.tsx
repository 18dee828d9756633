import { useMemo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { ITEM_STATES, TERMINAL_STATES, type ItemState, type ItemView, type WaitReason } from '../../../shared/studio';
import { EmptyState } from '../components/EmptyState';
import { Progress } from '../components/Progress';
import { selectOrderedItems, useQueue } from '../stores/queue-store';
import { act } from '../stores/ui-store';

const STEP: Record<ItemState, number> = { queued: 0, uploading: 1, submitting: 2, processing: 3, downloading: 4, review: 5, exporting: 6, exported: 7, failed: 7, skipped: 7, cancelled: 7 };
const WAIT_TEXT: Record<WaitReason, string> = {
  paused: 'paused',
  no_diamonds: 'not enough diamonds: resumes when the balance allows',
  daily_cap: 'daily request cap reached: resumes at the next UTC day',
  offline: 'service unreachable: retrying',
  service_error: 'service error: retrying with backoff',
  ceiling: 'batch diamond ceiling reached',
  uncertain: 'submission uncertain: check the service, then resubmit or fail',
};
/** Rough seconds per remaining step, for the ETA; the engine learns the real job times. */
const SECONDS_PER_ITEM = 6;

export function BatchBoard() {
  const items = useQueue(useShallow(selectOrderedItems));
  const budget = useQueue((s) => s.budget);
  const paused = useQueue((s) => s.paused);
  const counts = useMemo(() => {
    const c = Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
    for (const item of items) c[item.state]++;
    return c;
  }, [items]);
  const active = items.filter((i) => !TERMINAL_STATES.includes(i.state) && i.state !== 'review');
  const spent = items.reduce((sum, i) => sum + (i.jobId ? i.diamonds : 0), 0);
  const toSpend = active.reduce((sum, i) => sum + (i.jobId ? 0 : i.diamonds), 0);
  // Failed photos, and pack photos whose shots partly failed (retried alone).
  const failed = items.filter((i) => i.state === 'failed' || i.failedShots.length > 0);
  const requestsLeft = budget?.dailyCap == null ? null : Math.max(0, budget.dailyCap - budget.requestsUsedToday);

  if (items.length === 0) {
    return <EmptyState title="Nothing in the queue">Photos dropped into a hot folder appear here as they are picked up.</EmptyState>;
  }
  return (
    <section aria-label="Batch board">
      <div className="stats" role="group" aria-label="Budget">
        <Stat label="Diamonds left" value={budget?.diamondBalance ?? '—'} />
        <Stat label="Spent" value={spent} />
        <Stat label="To spend" value={toSpend} />
        <Stat label="Requests left today" value={requestsLeft ?? 'no cap'} />
        <Stat label="ETA" value={active.length ? `~${Math.ceil((active.length * SECONDS_PER_ITEM) / 60)} min` : 'done'} />
      </div>
      <div className="toolbar">
        <button type="button" onClick={() => act(() => useQueue.getState().setPaused(!paused))}>
          {paused ? 'Resume all' : 'Pause all'}
        </button>
        <button type="button" disabled={failed.length === 0} onClick={() => act(() => useQueue.getState().retry(failed.map((i) => i.id)))}>
          Retry failed ({failed.length})
        </button>
        <span className="muted">
          {ITEM_STATES.filter((s) => counts[s] > 0)
            .map((s) => `${counts[s]} ${s}`)
            .join(' · ')}
        </span>
      </div>
      <table className="items">
        <thead>
          <tr>
            <th scope="col">Photo</th>
            <th scope="col">State</th>
            <th scope="col">Progress</th>
            <th scope="col">Why it waits / what happened</th>
            <th scope="col">Diamonds</th>
          </tr>
        </thead>
        <tbody>
          {items.slice(0, 2000).map((item) => (
            <ItemRow key={item.id} item={item} />
          ))}
        </tbody>
      </table>
      {items.length > 2000 && <p className="muted">Showing the first 2,000 of {items.length} items.</p>}
    </section>
  );
}

function ItemRow({ item }: { item: ItemView }) {
  const reason = item.waitReason ? WAIT_TEXT[item.waitReason] : (item.error ?? item.note ?? '');
  return (
    <tr data-state={item.state}>
      <td>
        {item.relativeDir ? <span className="muted">{item.relativeDir}/</span> : null}
        {item.name}
      </td>
      <td>
        <span className={`state state-${item.state}`}>{item.state}</span>
      </td>
      <td>
        <Progress value={STEP[item.state]} max={7} label={`${item.name} progress`} />
        {item.packTotal ? <small className="muted"> {item.packCompleted ?? 0}/{item.packTotal} shots</small> : null}
      </td>
      <td className={item.state === 'failed' ? 'problem' : ''}>{reason}</td>
      <td>{item.diamonds}</td>
    </tr>
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
