import type { AccountRepository, AccountRow } from '../types';
import { SqliteRepository } from './gate';

type Raw = Omit<AccountRow, 'planIsPremium' | 'planCancelAtPeriodEnd'> & {
  planIsPremium: number;
  planCancelAtPeriodEnd: number;
};

export class SqliteAccounts extends SqliteRepository implements AccountRepository {
  create(account: { id: string; email: string; createdAt: string }): Promise<void> {
    return this.run((db) => {
      db.prepare('INSERT INTO accounts (id, email, created_at) VALUES (?, ?, ?)').run(
        account.id,
        account.email,
        account.createdAt,
      );
    });
  }

  idByEmail(email: string): Promise<string | undefined> {
    // accounts.email is COLLATE NOCASE: the comparison is case-insensitive.
    return this.run(
      (db) =>
        (
          db.prepare('SELECT id FROM accounts WHERE email = ?').get(email) as
            { id: string } | undefined
        )?.id,
    );
  }

  get(id: string): Promise<AccountRow | undefined> {
    return this.run((db) => {
      const row = db
        .prepare(
          `SELECT id, email, balance, plan_status AS planStatus, plan_product_id AS planProductId, plan_provider AS planProvider,
                  plan_is_premium AS planIsPremium, plan_cancel_at_period_end AS planCancelAtPeriodEnd, plan_renews_at AS planRenewsAt,
                  created_at AS createdAt
           FROM accounts WHERE id = ?`,
        )
        .get(id) as Raw | undefined;
      return (
        row && {
          ...row,
          planIsPremium: row.planIsPremium === 1,
          planCancelAtPeriodEnd: row.planCancelAtPeriodEnd === 1,
        }
      );
    });
  }
}
