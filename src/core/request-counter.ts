/**
 * Per key, per UTC day request counts (the daily cap), kept in memory and written to SQLite in
 * small batches. A write transaction per request would cost more than the poll it counts; the
 * price is that a crash forgets at most one flush interval of counts, and two processes serving
 * one data folder each enforce the cap on their own view (one server per data folder is the
 * supported set-up; admin commands do not count requests).
 */
import type { WritableDB } from './db/types';
import { utcDay } from './clock';
import { DailyCapReached } from './errors';
import type { AuthenticatedKey } from './keys';

type Tally = { keyId: string; day: string; count: number; unflushed: number };

export class RequestCounter {
  private readonly tallies = new Map<string, Tally>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: WritableDB,
    private readonly flushMs = 50,
  ) {}

  /** Counts one request, or throws DailyCapReached (429) without counting it. */
  count(key: AuthenticatedKey, now: Date): number {
    const day = utcDay(now);
    const id = `${key.keyId}\n${day}`;
    let tally = this.tallies.get(id);
    if (!tally) {
      const row = this.db.prepare('SELECT count FROM key_usage WHERE key_id = ? AND day = ?').get(key.keyId, day) as
        | { count: number }
        | undefined;
      tally = { keyId: key.keyId, day, count: row?.count ?? 0, unflushed: 0 };
      this.tallies.set(id, tally);
    }
    if (tally.count >= key.dailyCap) throw new DailyCapReached(key.dailyCap);
    tally.count++;
    tally.unflushed++;
    this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
    return tally.count;
  }

  /** Requests counted today for a key, including those not yet written. */
  used(keyId: string, now: Date): number {
    const day = utcDay(now);
    const tally = this.tallies.get(`${keyId}\n${day}`);
    if (tally) return tally.count;
    const row = this.db.prepare('SELECT count FROM key_usage WHERE key_id = ? AND day = ?').get(keyId, day) as
      | { count: number }
      | undefined;
    return row?.count ?? 0;
  }

  /** Adds the unwritten counts to the stored ones (added, not set: other writers' counts stay). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const pending = [...this.tallies.values()].filter((t) => t.unflushed > 0);
    if (pending.length === 0) return;
    const upsert = this.db.prepare(
      `INSERT INTO key_usage (key_id, day, count) VALUES (?, ?, ?)
       ON CONFLICT (key_id, day) DO UPDATE SET count = count + excluded.count`,
    );
    this.db.transaction(() => {
      for (const t of pending) upsert.run(t.keyId, t.day, t.unflushed);
    })();
    for (const t of pending) t.unflushed = 0;
    // Yesterday's tallies are complete once written; keep only the current day's.
    const today = [...this.tallies.values()].reduce((latest, t) => (t.day > latest ? t.day : latest), '');
    for (const [id, t] of this.tallies) if (t.day !== today) this.tallies.delete(id);
  }
}
