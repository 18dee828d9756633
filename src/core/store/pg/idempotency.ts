import type { IdempotencyRepository, IdempotencyRow } from '../types';
import type { Executor } from './executor';

export class PgIdempotency implements IdempotencyRepository {
  constructor(private readonly ex: Executor) {}

  async get(accountId: string, endpoint: string, key: string): Promise<IdempotencyRow | undefined> {
    const rows = await this.ex.query<{
      bodyHash: string;
      status: number;
      response: string;
      createdAt: string;
    }>(
      `SELECT body_hash AS "bodyHash", status, response, created_at AS "createdAt"
       FROM idempotency WHERE account_id = $1 AND endpoint = $2 AND idem_key = $3`,
      [accountId, endpoint, key],
    );
    const row = rows[0];
    return (
      row && {
        accountId,
        endpoint,
        key,
        bodyHash: row.bodyHash,
        status: row.status,
        body: JSON.parse(row.response) as object,
        createdAt: row.createdAt,
      }
    );
  }

  async put(row: IdempotencyRow, replaceBefore: string): Promise<boolean> {
    // A rival inserting the same key in an open transaction makes this wait for its outcome;
    // then a fresh row is left alone (no row returned) and an expired one replaced.
    const rows = await this.ex.query(
      `INSERT INTO idempotency (account_id, endpoint, idem_key, body_hash, status, response, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (account_id, endpoint, idem_key) DO UPDATE SET
         body_hash = excluded.body_hash, status = excluded.status, response = excluded.response, created_at = excluded.created_at
       WHERE idempotency.created_at < $8
       RETURNING 1`,
      [
        row.accountId,
        row.endpoint,
        row.key,
        row.bodyHash,
        row.status,
        JSON.stringify(row.body),
        row.createdAt,
        replaceBefore,
      ],
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
