import type { AccountRepository, AccountRow, ActiveKey, KeyRepository, NewKey } from '../types';
import type { Executor } from './executor';

export class PgAccounts implements AccountRepository {
  constructor(private readonly ex: Executor) {}

  async create(account: { id: string; email: string; createdAt: string }): Promise<void> {
    await this.ex.query('INSERT INTO accounts (id, email, created_at) VALUES ($1, $2, $3)', [
      account.id,
      account.email,
      account.createdAt,
    ]);
  }

  async idByEmail(email: string): Promise<string | undefined> {
    const rows = await this.ex.query<{ id: string }>(
      'SELECT id FROM accounts WHERE lower(email) = lower($1)',
      [email],
    );
    return rows[0]?.id;
  }

  async get(id: string): Promise<AccountRow | undefined> {
    const rows = await this.ex.query<AccountRow>(
      `SELECT id, email, balance, plan_status AS "planStatus", plan_product_id AS "planProductId", plan_provider AS "planProvider",
              plan_is_premium AS "planIsPremium", plan_cancel_at_period_end AS "planCancelAtPeriodEnd",
              plan_renews_at AS "planRenewsAt", created_at AS "createdAt"
       FROM accounts WHERE id = $1`,
      [id],
    );
    return rows[0];
  }
}

export class PgKeys implements KeyRepository {
  constructor(private readonly ex: Executor) {}

  async create(key: NewKey): Promise<void> {
    await this.ex.query(
      'INSERT INTO api_keys (id, account_id, hash, prefix, daily_cap, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [key.id, key.accountId, key.hash, key.prefix, key.dailyCap, key.createdAt],
    );
  }

  async findActiveByHash(hash: string): Promise<ActiveKey | undefined> {
    const rows = await this.ex.query<ActiveKey>(
      'SELECT id AS "keyId", account_id AS "accountId", daily_cap AS "dailyCap" FROM api_keys WHERE hash = $1 AND revoked_at IS NULL',
      [hash],
    );
    return rows[0];
  }

  async findActiveById(keyId: string): Promise<ActiveKey | undefined> {
    const rows = await this.ex.query<ActiveKey>(
      'SELECT id AS "keyId", account_id AS "accountId", daily_cap AS "dailyCap" FROM api_keys WHERE id = $1 AND revoked_at IS NULL',
      [keyId],
    );
    return rows[0];
  }

  async countActive(accountId: string): Promise<number> {
    const rows = await this.ex.query<{ n: number }>(
      'SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL',
      [accountId],
    );
    return rows[0]?.n ?? 0;
  }

  async firstActiveIdByEmail(email: string): Promise<string | undefined> {
    const rows = await this.ex.query<{ id: string }>(
      `SELECT k.id FROM api_keys k JOIN accounts a ON a.id = k.account_id
       WHERE lower(a.email) = lower($1) AND k.revoked_at IS NULL ORDER BY k.created_at, k.id LIMIT 1`,
      [email],
    );
    return rows[0]?.id;
  }

  async revoke(
    keyId: string,
    revokedAt: string,
  ): Promise<'revoked' | 'already revoked' | 'missing'> {
    // One statement: the key as it was before this call, and whether this call revoked it.
    const rows = await this.ex.query<{ revoked: boolean }>(
      `WITH done AS (UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id)
       SELECT EXISTS (SELECT 1 FROM done) AS revoked FROM api_keys WHERE id = $1`,
      [keyId, revokedAt],
    );
    if (rows.length === 0) return 'missing';
    return rows[0]!.revoked ? 'revoked' : 'already revoked';
  }

  async changeMarker(): Promise<number> {
    const rows = await this.ex.query<{ marker: number }>('SELECT marker FROM key_changes');
    return rows[0]?.marker ?? 0;
  }
}
