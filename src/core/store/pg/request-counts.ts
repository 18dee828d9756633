import type { RequestCountRepository } from '../types';
import type { Executor } from './executor';

/**
 * The daily cap, exact across processes: one upsert per request that adds 1 only while the count
 * is under the cap. Concurrent increments of one key queue on its row; no row back means refused.
 */
export class PgRequestCounts implements RequestCountRepository {
  constructor(private readonly ex: Executor) {}

  async increment(keyId: string, day: string, cap: number): Promise<{ count: number; refused: boolean }> {
    const rows = await this.ex.query<{ count: number }>(
      `INSERT INTO key_usage (key_id, day, count) VALUES ($1, $2, 1)
       ON CONFLICT (key_id, day) DO UPDATE SET count = key_usage.count + 1 WHERE key_usage.count < $3
       RETURNING count`,
      [keyId, day, cap],
    );
    if (rows[0]) return { count: rows[0].count, refused: false };
    return { count: await this.get(keyId, day), refused: true };
  }

  async get(keyId: string, day: string): Promise<number> {
    const rows = await this.ex.query<{ count: number }>('SELECT count FROM key_usage WHERE key_id = $1 AND day = $2', [keyId, day]);
    return rows[0]?.count ?? 0;
  }
}
