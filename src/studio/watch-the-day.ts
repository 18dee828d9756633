/**
 * `run --wait` at a closed day: one line when the day closes for the batch and one when the wait
 * ends. Checked twice a second with one aggregate query over the batch (a count, not its rows), so
 * a batch of thousands of photos costs the same as one of ten; the photos themselves are read only
 * when a line is written.
 */
import path from 'node:path';
import { TERMINAL_STATES } from '../shared/studio';
import { utcDay } from '../shared/utc-day';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import type { StudioEngine } from './engine';
import { Gates } from './gates';

/** Not done with (neither terminal nor in review): how many, and how many wait for the daily cap. */
export type BatchWaiting = { waiting: number; capped: number };

const OPEN_ITEMS = `batch_id = ? AND state NOT IN (${[...TERMINAL_STATES, 'review'].map((s) => `'${s}'`).join(',')})`;

/** The batch's photos not done with, counted in the database (no row is read out). */
export function batchWaiting(db: StudioDB, batchId: string): BatchWaiting {
  const row = db
    .prepare(
      `SELECT COUNT(*) AS waiting, COALESCE(SUM(wait_reason = 'daily_cap'), 0) AS capped
       FROM items WHERE ${OPEN_ITEMS}`,
    )
    .get(batchId) as BatchWaiting;
  return row;
}

/** Whether any of `ids` (the steps under way) belongs to the batch. */
function anyOfBatch(db: StudioDB, batchId: string, ids: string[]): boolean {
  if (ids.length === 0) return false;
  return (
    db
      .prepare(
        'SELECT 1 FROM items WHERE batch_id = ? AND id IN (SELECT value FROM json_each(?)) LIMIT 1',
      )
      .get(batchId, JSON.stringify(ids)) !== undefined
  );
}

/**
 * Closed: the day itself (the service's 429, the studio's own count, the remembered cap), or every
 * photo left held because today's requests left do not fit one, with nothing of the batch under
 * way. A day that closes with nothing of the batch left to do is not a wait. Returns the stop.
 */
export function watchTheDay(
  engine: StudioEngine,
  batchId: string,
  notice: (line: string) => void,
  everyMs = 500,
): () => void {
  let closedAt: {
    at: number;
    until: number;
    dayClosed: boolean;
    paid: number;
    unpaid: number;
  } | null = null;
  const name = (i: store.ItemRow) => path.join(i.relativeDir, i.name);
  const check = () => {
    if (!engine.db.open) return;
    const now = engine.now().getTime();
    const { waiting, capped } = batchWaiting(engine.db, batchId);
    const dayClosed = engine.dayClosed();
    const closed =
      waiting > 0 &&
      (dayClosed ||
        (capped === waiting &&
          !anyOfBatch(engine.db, batchId, [...engine.running.keys(), ...engine.polling.keys()])));
    if (closed === (closedAt !== null)) return;
    if (closed) {
      // The line names the paid jobs: the batch's open photos are read once, now.
      const open = store
        .listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 })
        .items.filter((i) => !engine.isTerminal(i.state) && i.state !== 'review');
      const paid = open.filter((i) => store.isPaid(i));
      const gate = engine.gates.cap;
      const until = gate && now < gate.until ? gate.until : Gates.nextUtcDay(new Date(now));
      closedAt = {
        at: now,
        until,
        dayClosed,
        paid: paid.length,
        unpaid: open.length - paid.length,
      };
      const minutes = Math.ceil((until - now) / 60_000);
      const today = engine.spending.requestsToday();
      const why = !dayClosed
        ? `${today.left ?? 0} request(s) left today, fewer than a photo needs`
        : gate && now < gate.until && gate.kind !== 'own'
          ? gate.message
          : `--daily-cap ${engine.spending.dailyCap}`;
      notice(
        `daily request cap reached (${why}): ${today.used} request(s) used today${today.cap !== null ? ` of ${today.cap}` : ''}; ` +
          `waiting until 00:00 UTC (${new Date(until).toISOString()}), in ${Math.floor(minutes / 60)} h ${minutes % 60} min (--wait). ` +
          `${paid.length} paid job(s) will be collected then: ${paid.map(name).join(', ') || 'none'}; ${open.length - paid.length} photo(s) not paid for yet`,
      );
    } else {
      const { at, paid: paidThen, unpaid } = closedAt!;
      const waited = Math.round((now - at) / 1000);
      const why =
        now >= closedAt!.until
          ? `a new UTC day, ${utcDay(now)}`
          : closedAt!.dayClosed && !engine.spending.ownCapReached()
            ? 'the service answered a request beyond its cap: it was raised'
            : 'requests freed today';
      closedAt = null;
      notice(
        `the wait for the daily cap is over after ${Math.floor(waited / 60)} min ${waited % 60} s (${why}): ` +
          `going on with the ${paidThen} paid job(s) to collect and ${unpaid} photo(s) to start`,
      );
    }
  };
  const timer = setInterval(check, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
