/** Progress and time left of a set of items (a batch, a folder), from what the board already has. */
import { TERMINAL_STATES, type ItemView } from '../../shared/studio';

export type Progress = {
  total: number;
  done: number;
  remaining: number;
  etaSeconds: number | null;
};

/** Items that count as finished for progress: terminal, or waiting for the operator's review. */
export const isSettled = (item: ItemView) =>
  TERMINAL_STATES.includes(item.state) || item.state === 'review';

/**
 * ETA from the pace seen so far: photos settled in the last 15 minutes over the time they took.
 * No pace yet (nothing settled) means no ETA rather than an invented one.
 */
export function progressOf(items: ItemView[], now = Date.now()): Progress {
  const counted = items.filter((i) => i.state !== 'skipped' && i.state !== 'cancelled');
  const done = counted.filter(isSettled);
  const remaining = counted.length - done.length;
  const since = now - 15 * 60_000;
  const recent = done.filter((i) => i.state !== 'rejected' && Date.parse(i.updatedAt) >= since);
  let etaSeconds: number | null = null;
  if (remaining === 0) etaSeconds = 0;
  else if (recent.length >= 1) {
    const start = Math.min(
      ...counted.map((i) => Date.parse(i.createdAt)).filter((t) => t >= since),
      ...recent.map((i) => Date.parse(i.updatedAt)),
    );
    const elapsed = Math.max(5_000, now - start);
    etaSeconds = Math.round((remaining * elapsed) / recent.length / 1000);
  }
  return { total: counted.length, done: done.length, remaining, etaSeconds };
}

/** Every photo still to go waits for the daily request cap: nothing moves before 00:00 UTC. */
export const heldByDailyCap = (items: ItemView[]) => {
  const open = items.filter((i) => !isSettled(i));
  return open.length > 0 && open.every((i) => i.waitReason === 'daily_cap');
};

export function etaText(progress: Progress, paused: boolean, capHeld = false): string {
  if (progress.remaining === 0) return 'done';
  if (paused) return 'paused';
  if (capHeld) return 'after 00:00 UTC (daily cap)';
  if (progress.etaSeconds === null) return 'estimating…';
  if (progress.etaSeconds < 60) return 'under a minute';
  return `about ${Math.ceil(progress.etaSeconds / 60)} min`;
}
