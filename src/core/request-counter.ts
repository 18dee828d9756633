/**
 * The daily cap: every request of a key is counted per UTC day before any other work, and the
 * one past the cap is refused (429) without being counted. The store makes the count exact
 * (SQLite: in memory for its one process, written in batches; PostgreSQL: one atomic upsert).
 */
import type { Store } from './store/types';
import { utcDay } from './clock';
import { DailyCapReached } from './errors';
import type { AuthenticatedKey } from './keys';

/** Counts one request, or throws DailyCapReached (429) without counting it; returns the day's count. */
export async function countRequest(
  store: Store,
  key: AuthenticatedKey,
  now: Date,
): Promise<number> {
  const { count, refused } = await store.requests.increment(key.keyId, utcDay(now), key.dailyCap);
  if (refused) throw new DailyCapReached(key.dailyCap);
  return count;
}

/** Requests counted today for a key. */
export function requestsUsed(store: Store, keyId: string, now: Date): Promise<number> {
  return store.requests.get(keyId, utcDay(now));
}
