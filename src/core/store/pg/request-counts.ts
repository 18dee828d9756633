import type { RequestCountRepository } from '../types';
import type { Executor } from './executor';

/**
 * The daily cap, exact across processes: one upsert per request that adds 1 only while the count
 * is under the cap. Concurrent increments of one key queue on its row; no row back means refused.
 *
 * Counted on its own (every request, the hottest write), the upsert commits without waiting for
 * its WAL flush (`synchronous_commit` off for that statement only, via a local set_config): about
 * 3x the rate on one key here. The count is still atomic and every process sees it at once; only
 * a crash of the PostgreSQL server itself may forget the last fraction of a second of counts (never
 * corrupt them), as the SQLite store's batching forgets up to 50 ms when its process dies. Inside
 * a store transaction the setting would cover the whole transaction, so there it is not used.
 */
const INCREMENT = (asyncCommit: boolean) => `
  INSERT INTO key_usage (key_id, day, count)
  SELECT $1, $2, 1${asyncCommit ? " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit" : ''}
  ON CONFLICT (key_id, day) DO UPDATE SET count = key_usage.count + 1 WHERE key_usage.count < $3
  RETURNING count`;

export class PgRequestCounts implements RequestCountRepository {
  private readonly increments: string;

  constructor(private readonly ex: Executor) {
    this.increments = INCREMENT(!ex.inTransaction);
  }

  async increment(
    keyId: string,
    day: string,
    cap: number,
  ): Promise<{ count: number; refused: boolean }> {
    const rows = await this.ex.query<{ count: number }>(this.increments, [keyId, day, cap]);
    if (rows[0]) return { count: rows[0].count, refused: false };
    return { count: await this.get(keyId, day), refused: true };
  }

  async get(keyId: string, day: string): Promise<number> {
    const rows = await this.ex.query<{ count: number }>(
      'SELECT count FROM key_usage WHERE key_id = $1 AND day = $2',
      [keyId, day],
    );
    return rows[0]?.count ?? 0;
  }
}
