import type { IdempotencyRepository, IdempotencyRow } from '../types';
import {
  IDEMPOTENCY_INSERT_COLUMNS,
  idempotencyFromStored,
  idempotencyParams,
  type StoredIdempotency,
} from '../idempotency-row';
import { SqliteRepository } from './gate';

export class SqliteIdempotency extends SqliteRepository implements IdempotencyRepository {
  get(accountId: string, endpoint: string, key: string): Promise<IdempotencyRow | undefined> {
    return this.run((db) => {
      const row = db
        .prepare(
          'SELECT body_hash AS bodyHash, status, response, created_at AS createdAt FROM idempotency WHERE account_id = ? AND endpoint = ? AND idem_key = ?',
        )
        .get(accountId, endpoint, key) as StoredIdempotency | undefined;
      return row && idempotencyFromStored(accountId, endpoint, key, row);
    });
  }

  put(row: IdempotencyRow, replaceBefore: string): Promise<boolean> {
    return this.run(
      (db) =>
        db
          .prepare(
            `INSERT INTO idempotency (${IDEMPOTENCY_INSERT_COLUMNS})
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (account_id, endpoint, idem_key) DO UPDATE SET
               body_hash = excluded.body_hash, status = excluded.status, response = excluded.response, created_at = excluded.created_at
             WHERE idempotency.created_at < ?`,
          )
          .run(...idempotencyParams(row), replaceBefore).changes === 1,
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
