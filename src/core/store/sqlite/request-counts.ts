/**
 * Per key, per UTC day request counts (the daily cap), kept in memory and written in small
 * batches: a write transaction per request would cost more than the poll it counts. Exact
 * because one process serves one SQLite file (the supported set-up; admin commands count no
 * requests); a crash forgets at most one flush interval of counts. Written counts are added,
 * never set, so another writer's counts stay.
 */
import type { WritableDB } from '../../db/types';
import type { RequestCountRepository } from '../types';
import type { Gate } from './gate';

type Tally = { keyId: string; day: string; count: number; unflushed: number };

export class CountTallies {
  private readonly tallies = new Map<string, Tally>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: WritableDB,
    /** Runs the batch write in its turn, never inside a store transaction (it would be rolled back with it). */
    private readonly inTurn: Gate,
    private readonly flushMs = 50,
  ) {}

  /** Synchronous from the first read to the increment: no other count interleaves. */
  increment(keyId: string, day: string, cap: number): { count: number; refused: boolean } {
    const tally = this.tally(keyId, day);
    if (tally.count >= cap) return { count: tally.count, refused: true };
    tally.count++;
    tally.unflushed++;
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
    return { count: tally.count, refused: false };
  }

  get(keyId: string, day: string): number {
    return this.tallies.get(`${keyId}\n${day}`)?.count ?? this.stored(keyId, day);
  }

  private tally(keyId: string, day: string): Tally {
    const id = `${keyId}\n${day}`;
    let tally = this.tallies.get(id);
    if (!tally) {
      tally = { keyId, day, count: this.stored(keyId, day), unflushed: 0 };
      this.tallies.set(id, tally);
    }
    return tally;
  }

  private stored(keyId: string, day: string): number {
    return (
      (
        this.db
          .prepare('SELECT count FROM key_usage WHERE key_id = ? AND day = ?')
          .get(keyId, day) as { count: number } | undefined
      )?.count ?? 0
    );
  }

  /** Adds the unwritten counts to the stored ones, outside any store transaction (never rolled back with one). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inTurn(() => this.write());
  }

  private write(): void {
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
    const today = [...this.tallies.values()].reduce(
      (latest, t) => (t.day > latest ? t.day : latest),
      '',
    );
    for (const [id, t] of this.tallies) if (t.day !== today) this.tallies.delete(id);
  }
}

export class SqliteRequestCounts implements RequestCountRepository {
  constructor(
    private readonly tallies: CountTallies,
    private readonly gate: Gate,
  ) {}

  increment(keyId: string, day: string, cap: number): Promise<{ count: number; refused: boolean }> {
    return this.gate(() => this.tallies.increment(keyId, day, cap));
  }

  get(keyId: string, day: string): Promise<number> {
    return this.gate(() => this.tallies.get(keyId, day));
  }
}
