import type { BlobRecord, BlobRowRepository, NewBlobRow } from '../types';
import { SqliteRepository } from './gate';

export class SqliteBlobRows extends SqliteRepository implements BlobRowRepository {
  insert(row: NewBlobRow): Promise<void> {
    return this.run((db) => {
      db.prepare(
        'INSERT INTO blobs (id, sha256, mime, size, account_id, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(row.id, row.sha256, row.mime, row.size, row.accountId, row.origin, row.createdAt);
    });
  }

  get(id: string): Promise<BlobRecord | undefined> {
    return this.run(
      (db) =>
        db.prepare('SELECT id, sha256, mime, size FROM blobs WHERE id = ?').get(id) as
          BlobRecord | undefined,
    );
  }

  isRecorded(sha256: string): Promise<boolean> {
    return this.run(
      (db) => db.prepare('SELECT 1 FROM blobs WHERE sha256 = ? LIMIT 1').get(sha256) !== undefined,
    );
  }

  recordedShas(): Promise<Set<string>> {
    return this.run(
      (db) =>
        new Set(
          (db.prepare('SELECT DISTINCT sha256 FROM blobs').all() as { sha256: string }[]).map(
            (r) => r.sha256,
          ),
        ),
    );
  }

  accountBytes(accountId: string): Promise<number> {
    return this.run(
      (db) =>
        (
          db
            .prepare(
              'SELECT COALESCE(SUM(size), 0) AS bytes FROM (SELECT DISTINCT sha256, size FROM blobs WHERE account_id = ?)',
            )
            .get(accountId) as { bytes: number }
        ).bytes,
    );
  }

  accountHolds(accountId: string, sha256: string): Promise<boolean> {
    return this.run(
      (db) =>
        db
          .prepare('SELECT 1 FROM blobs WHERE account_id = ? AND sha256 = ? LIMIT 1')
          .get(accountId, sha256) !== undefined,
    );
  }
}
