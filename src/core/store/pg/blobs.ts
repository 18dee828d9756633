import type { BlobRecord, BlobRowRepository, NewBlobRow } from '../types';
import type { Executor } from './executor';

export class PgBlobRows implements BlobRowRepository {
  constructor(private readonly ex: Executor) {}

  async insert(row: NewBlobRow): Promise<void> {
    await this.ex.query(
      'INSERT INTO blobs (id, sha256, mime, size, account_id, origin, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [row.id, row.sha256, row.mime, row.size, row.accountId, row.origin, row.createdAt],
    );
  }

  async get(id: string): Promise<BlobRecord | undefined> {
    const rows = await this.ex.query<BlobRecord>(
      'SELECT id, sha256, mime, size FROM blobs WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  async isRecorded(sha256: string): Promise<boolean> {
    return (
      (await this.ex.query('SELECT 1 FROM blobs WHERE sha256 = $1 LIMIT 1', [sha256])).length > 0
    );
  }

  async recordedShas(): Promise<Set<string>> {
    const rows = await this.ex.query<{ sha256: string }>('SELECT DISTINCT sha256 FROM blobs');
    return new Set(rows.map((r) => r.sha256));
  }

  async accountBytes(accountId: string): Promise<number> {
    // sum(bigint) is numeric in PostgreSQL: cast back so it arrives as an exact number.
    const rows = await this.ex.query<{ bytes: number }>(
      'SELECT COALESCE(sum(size), 0)::bigint AS bytes FROM (SELECT DISTINCT sha256, size FROM blobs WHERE account_id = $1) AS held',
      [accountId],
    );
    return rows[0]?.bytes ?? 0;
  }

  async accountHolds(accountId: string, sha256: string): Promise<boolean> {
    return (
      (
        await this.ex.query('SELECT 1 FROM blobs WHERE account_id = $1 AND sha256 = $2 LIMIT 1', [
          accountId,
          sha256,
        ])
      ).length > 0
    );
  }
}
