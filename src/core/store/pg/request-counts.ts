import type { RequestCountRepository } from '../types';
import { randomUUID } from 'node:crypto';
import type { Executor } from './executor';
import { RequestAllowances, type Admitted } from './request-allowance';

/**
 * The daily cap, exact across processes: an upsert that adds to a key's count only while the sum
 * stays within the cap. Concurrent increments of one key queue on its row; no row added means
 * refused. Counts never pass the cap, so a refused single request always saw count = cap.
 *
 * Batched per process (on the pool, not inside a store transaction): while one upsert of a key
 * and day is on its way, the increments that arrive meanwhile wait and go together as the next
 * one, adding n at once if all n fit under the cap (the poll path's only write; under load one
 * statement then carries many requests instead of one each). Exact all the same: the requests of
 * a batch were all in flight together, so any order among them is a true order; a batch that
 * does not fit whole falls back to one upsert per request, which accept up to the cap and refuse
 * the rest, whichever process answers. A lone request goes at once (no added wait).
 *
 * Counted on its own (every request, the hottest write), the upsert commits without waiting for
 * its WAL flush (`synchronous_commit` off for that statement only, via a local set_config): about
 * 3x the rate on one key here. The count is still atomic and every process sees it at once; only
 * a crash of the PostgreSQL server itself may forget the last fraction of a second of counts (never
 * corrupt them), as the SQLite store's batching forgets up to 50 ms when its process dies. Inside
 * a store transaction the setting would cover the whole transaction, so there it is not used.
 *
 * The statement returns the row added to, else the row as its snapshot saw it (`added` false):
 * enough to tell a key certainly at the cap from one to try a request at a time, without another
 * round trip.
 */
const ADD = (asyncCommit: boolean) => `
  WITH added AS (
    INSERT INTO key_usage (key_id, day, count)
    SELECT $1, $2, $3::integer${asyncCommit ? " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit" : ''}
    WHERE $3::integer <= $4::integer
    ON CONFLICT (key_id, day) DO UPDATE SET count = key_usage.count + EXCLUDED.count
      WHERE key_usage.count + EXCLUDED.count <= $4::integer
    RETURNING count
  )
  SELECT count, true AS added FROM added
  UNION ALL
  SELECT count, false AS added FROM key_usage
  WHERE key_id = $1 AND day = $2 AND NOT EXISTS (SELECT 1 FROM added)`;

type Counted = { count: number; refused: boolean };
type Waiter = { resolve(result: Counted): void; reject(err: unknown): void };
type Slot = { keyId: string; day: string; cap: number; waiting: Waiter[]; sending: boolean };

export class PgRequestCounts implements RequestCountRepository {
  private readonly adds: string;
  /** Per key, day and cap: the increments waiting for the upsert under way to come back. */
  private readonly slots = new Map<string, Slot>();

  /** The service's path on the pool: admits from per-process allowances (request-allowance.ts). */
  private readonly allowances: RequestAllowances | undefined;

  constructor(private readonly ex: Executor) {
    this.adds = ADD(!ex.inTransaction);
    if (!ex.inTransaction) this.allowances = new RequestAllowances(ex, randomUUID());
  }

  /**
   * Admits one request of the key on the day or refuses it past the cap, exact across processes
   * like `increment`, mostly without a round trip (see request-allowance.ts). Its count includes
   * what processes hold ahead, so it is an upper bound, not this request's rank. Inside a
   * transaction it is `increment`.
   */
  admit(keyId: string, day: string, cap: number): Promise<Admitted> {
    return this.allowances
      ? this.allowances.admit(keyId, day, cap)
      : this.increment(keyId, day, cap);
  }

  /** Gives back what this process holds ahead (the store is closing). */
  async close(): Promise<void> {
    await this.allowances?.close();
  }

  increment(keyId: string, day: string, cap: number): Promise<Counted> {
    if (this.ex.inTransaction) return this.add(keyId, day, cap, 1).then((r) => r[0]!);
    const name = `${keyId}\n${day}\n${cap}`;
    let slot = this.slots.get(name);
    if (!slot) {
      slot = { keyId, day, cap, waiting: [], sending: false };
      this.slots.set(name, slot);
    }
    const counted = new Promise<Counted>((resolve, reject) =>
      slot.waiting.push({ resolve, reject }),
    );
    if (!slot.sending) void this.send(name, slot);
    return counted;
  }

  async get(keyId: string, day: string): Promise<number> {
    const rows = await this.ex.query<{ count: number }>(
      'SELECT count FROM key_usage WHERE key_id = $1 AND day = $2',
      [keyId, day],
    );
    return rows[0]?.count ?? 0;
  }

  /** Sends what waits, one batch at a time, until nothing is left; then forgets the slot. */
  private async send(name: string, slot: Slot): Promise<void> {
    slot.sending = true;
    while (slot.waiting.length > 0) {
      const batch = slot.waiting.splice(0);
      try {
        const results = await this.add(slot.keyId, slot.day, slot.cap, batch.length);
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    slot.sending = false;
    this.slots.delete(name);
  }

  /** Counts n requests: all at once if they fit, else one by one up to the cap. */
  private async add(keyId: string, day: string, cap: number, n: number): Promise<Counted[]> {
    const first = await this.upsert(keyId, day, cap, n);
    if (first.added)
      return Array.from({ length: n }, (_, i) => ({
        count: first.count - n + 1 + i,
        refused: false,
      }));
    // Counts never pass the cap: a single refusal, or a snapshot already at the cap, is final.
    const atCap = (seen: number | undefined): Counted => ({
      count: Math.max(seen ?? 0, cap),
      refused: true,
    });
    if (n === 1 || (first.seen ?? 0) >= cap)
      return Array.from({ length: n }, () => atCap(first.seen));
    const results: Counted[] = [];
    for (let i = 0; i < n; i++) {
      if (results.at(-1)?.refused) {
        results.push(atCap(cap));
        continue;
      }
      const one = await this.upsert(keyId, day, cap, 1);
      results.push(one.added ? { count: one.count, refused: false } : atCap(one.seen));
    }
    return results;
  }

  /** One upsert of n; when refused, the count its snapshot saw (undefined: no row in it). */
  private async upsert(
    keyId: string,
    day: string,
    cap: number,
    n: number,
  ): Promise<{ added: true; count: number } | { added: false; seen: number | undefined }> {
    const rows = await this.ex.query<{ count: number; added: boolean }>(this.adds, [
      keyId,
      day,
      n,
      cap,
    ]);
    const row = rows[0];
    if (row?.added) return { added: true, count: row.count };
    return { added: false, seen: row?.count };
  }
}
