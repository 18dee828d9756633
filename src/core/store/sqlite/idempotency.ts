import type { IdempotencyRepository, IdempotencyRow } from '../types';
import { SqliteRepository } from './gate';

export class SqliteIdempotency extends SqliteRepository implements IdempotencyRepository {
  get(accountId: string, endpoint: string, key: string): Promise<IdempotencyRow | undefined> {
    return this.run((db) => {
      const row = db
        .prepare(
          'SELECT body_hash AS bodyHash, status, response, created_at AS createdAt FROM idempotency WHERE account_id = ? AND endpoint = ? AND idem_key = ?',
        )
        .get(accountId, endpoint, key) as
        { bodyHash: string; status: number; response: string; createdAt: string } | undefined;
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
    });
  }

  put(row: IdempotencyRow, replaceBefore: string): Promise<boolean> {
    return this.run(
      (db) =>
        db
          .prepare(
            `INSERT INTO idempotency (account_id, endpoint, idem_key, body_hash, status, response, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (account_id, endpoint, idem_key) DO UPDATE SET
               body_hash = excluded.body_hash, status = excluded.status, response = excluded.response, created_at = excluded.created_at
             WHERE idempotency.created_at < ?`,
          )
          .run(
            row.accountId,
            row.endpoint,
            row.key,
            row.bodyHash,
            row.status,
            JSON.stringify(row.body),
            row.createdAt,
            replaceBefore,
          ).changes === 1,
    );
  }

  delete(accountId: string, endpoint: string, key: string): Promise<void> {
    return this.run((db) => {
      db.prepare(
        'DELETE FROM idempotency WHERE account_id = ? AND endpoint = ? AND idem_key = ?',
      ).run(accountId, endpoint, key);
    });
  }
}
