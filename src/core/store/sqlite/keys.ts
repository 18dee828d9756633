import type { ActiveKey, KeyRepository, NewKey } from '../types';
import { SqliteRepository } from './gate';

const ACTIVE = 'SELECT id AS keyId, account_id AS accountId, daily_cap AS dailyCap FROM api_keys';

export class SqliteKeys extends SqliteRepository implements KeyRepository {
  create(key: NewKey): Promise<void> {
    return this.run((db) => {
      db.prepare(
        'INSERT INTO api_keys (id, account_id, hash, prefix, daily_cap, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(key.id, key.accountId, key.hash, key.prefix, key.dailyCap, key.createdAt);
    });
  }

  findActiveByHash(hash: string): Promise<ActiveKey | undefined> {
    return this.run(
      (db) =>
        db.prepare(`${ACTIVE} WHERE hash = ? AND revoked_at IS NULL`).get(hash) as
          ActiveKey | undefined,
    );
  }

  findActiveById(keyId: string): Promise<ActiveKey | undefined> {
    return this.run(
      (db) =>
        db.prepare(`${ACTIVE} WHERE id = ? AND revoked_at IS NULL`).get(keyId) as
          ActiveKey | undefined,
    );
  }

  countActive(accountId: string): Promise<number> {
    return this.run(
      (db) =>
        (
          db
            .prepare(
              'SELECT COUNT(*) AS active FROM api_keys WHERE account_id = ? AND revoked_at IS NULL',
            )
            .get(accountId) as { active: number }
        ).active,
    );
  }

  firstActiveIdByEmail(email: string): Promise<string | undefined> {
    return this.run(
      (db) =>
        (
          db
            .prepare(
              `SELECT k.id FROM api_keys k JOIN accounts a ON a.id = k.account_id
               WHERE a.email = ? AND k.revoked_at IS NULL ORDER BY k.created_at LIMIT 1`,
            )
            .get(email) as { id: string } | undefined
        )?.id,
    );
  }

  revoke(keyId: string, revokedAt: string): Promise<'revoked' | 'already revoked' | 'missing'> {
    return this.run((db) => {
      if (
        db
          .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
          .run(revokedAt, keyId).changes === 1
      )
        return 'revoked';
      return db.prepare('SELECT 1 FROM api_keys WHERE id = ?').get(keyId)
        ? 'already revoked'
        : 'missing';
    });
  }

  /** Changes when another connection (the admin CLI, say) commits anything to the file. */
  changeMarker(): Promise<number> {
    return this.run(
      (db) =>
        (
          db.prepare('SELECT data_version AS version FROM pragma_data_version').get() as {
            version: number;
          }
        ).version,
    );
  }
}
