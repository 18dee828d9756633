import type { IdempotencyRepository, IdempotencyRow } from '../types';
import {
  IDEMPOTENCY_INSERT_COLUMNS,
  idempotencyFromStored,
  idempotencyParams,
  type StoredIdempotency,
} from '../idempotency-row';
import type { Executor } from './executor';

export class PgIdempotency implements IdempotencyRepository {
  constructor(private readonly ex: Executor) {}

  async get(accountId: string, endpoint: string, key: string): Promise<IdempotencyRow | undefined> {
    const rows = await this.ex.query<StoredIdempotency>(
      `SELECT body_hash AS "bodyHash", status, response, created_at AS "createdAt"
       FROM idempotency WHERE account_id = $1 AND endpoint = $2 AND idem_key = $3`,
      [accountId, endpoint, key],
    );
    return rows[0] && idempotencyFromStored(accountId, endpoint, key, rows[0]);
  }

  async put(row: IdempotencyRow, replaceBefore: string): Promise<boolean> {
    // A rival inserting the same key in an open transaction makes this wait for its outcome;
    // then a fresh row is left alone (no row returned) and an expired one replaced.
    const rows = await this.ex.query(
      `INSERT INTO idempotency (${IDEMPOTENCY_INSERT_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (account_id, endpoint, idem_key) DO UPDATE SET
         body_hash = excluded.body_hash, status = excluded.status, response = excluded.response, created_at = excluded.created_at
       WHERE idempotency.created_at < $8
       RETURNING 1`,
      [...idempotencyParams(row), replaceBefore],
    );
    return rows.length === 1;
  }

  async delete(accountId: string, endpoint: string, key: string): Promise<void> {
    await this.ex.query(
      'DELETE FROM idempotency WHERE account_id = $1 AND endpoint = $2 AND idem_key = $3',
      [accountId, endpoint, key],
    );
  }
}
