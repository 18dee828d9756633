/**
 * The daily cap: every request of a key is counted per UTC day before any other work, and the
 * one past the cap is refused (429) without being counted. The store makes the count exact
 * (SQLite: in memory for its one process, written in batches; PostgreSQL: admitted from small
 * allowances each process takes ahead from the shared count, so a busy key costs one statement
 * per 100 ms per process instead of one per request, and the cap stays exact across processes).
 */
import type { RequestCountRepository, Store } from './store/types';
import { utcDay } from '../shared/utc-day';
import { DailyCapReached } from './errors';
import type { AuthenticatedKey } from './keys';

type Count = { count: number; refused: boolean };

/**
 * A repository that admits requests from a per-process allowance (PostgreSQL's): same answer as
 * `increment`, but its count is an upper bound (it includes what processes hold ahead).
 */
type Admitting = RequestCountRepository & {
  admit(keyId: string, day: string, cap: number): Promise<Count>;
};

const admits = (r: RequestCountRepository): r is Admitting =>
  typeof (r as Partial<Admitting>).admit === 'function';

/** Counts one request, or throws DailyCapReached (429) without counting it; returns the day's count. */
export async function countRequest(
  store: Store,
  key: AuthenticatedKey,
  now: Date,
): Promise<number> {
  const day = utcDay(now);
  const { count, refused } = admits(store.requests)
    ? await store.requests.admit(key.keyId, day, key.dailyCap)
    : await store.requests.increment(key.keyId, day, key.dailyCap);
  if (refused) throw new DailyCapReached(key.dailyCap);
  return count;
}

/**
 * Requests counted today for a key. On PostgreSQL it includes what processes hold ahead for the
 * key (an upper bound; exact once those holds are given back, within 100 ms of the key's last request).
 */
export function requestsUsed(store: Store, keyId: string, now: Date): Promise<number> {
  return store.requests.get(keyId, utcDay(now));
}
