import type { LedgerEntry, LedgerRepository, NewLedgerEntry } from '../types';
import type { Executor } from './executor';

export class PgLedger implements LedgerRepository {
  constructor(private readonly ex: Executor) {}

  async balanceOf(
    accountId: string,
    opts: { forUpdate?: boolean } = {},
  ): Promise<number | undefined> {
    // The account row is the lock every charge of the account queues on until commit. NO KEY
    // UPDATE (what the balance UPDATE takes anyway), not UPDATE: a job or blob row inserted earlier
    // in the transaction holds KEY SHARE on the account through its foreign key, and FOR UPDATE
    // conflicts with that, so two such transactions deadlocked on every charge.
    const rows = await this.ex.query<{ balance: number }>(
      `SELECT balance FROM accounts WHERE id = $1${opts.forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
      [accountId],
    );
    return rows[0]?.balance;
  }

  async append(entry: NewLedgerEntry): Promise<number> {
    // One statement: the balance moves and the entry records it, or neither (CHECK balance >= 0,
    // one charge and one refund per job). The row lock the UPDATE takes orders concurrent entries.
    const rows = await this.ex.query<{ balanceAfter: number }>(
      `WITH moved AS (UPDATE accounts SET balance = balance + $3 WHERE id = $1 RETURNING balance)
       INSERT INTO ledger (account_id, kind, amount, job_id, balance_after, note, created_at)
       SELECT $1, $2, $3, $4, moved.balance, $5, $6 FROM moved
       RETURNING balance_after AS "balanceAfter"`,
      [entry.accountId, entry.kind, entry.amount, entry.jobId, entry.note, entry.createdAt],
    );
    const row = rows[0];
    if (!row) throw new Error(`no account ${entry.accountId}`);
    return row.balanceAfter;
  }

  async chargeOf(jobId: string): Promise<{ accountId: string; amount: number } | undefined> {
    const rows = await this.ex.query<{ accountId: string; amount: number }>(
      `SELECT account_id AS "accountId", amount FROM ledger WHERE job_id = $1 AND kind = 'charge'`,
      [jobId],
    );
    return rows[0];
  }

  async hasRefund(jobId: string): Promise<boolean> {
    const rows = await this.ex.query(`SELECT 1 FROM ledger WHERE job_id = $1 AND kind = 'refund'`, [
      jobId,
    ]);
    return rows.length > 0;
  }

  entriesFor(accountId: string): Promise<LedgerEntry[]> {
    return this.ex.query<LedgerEntry>(
      `SELECT id, account_id AS "accountId", kind, amount, job_id AS "jobId", balance_after AS "balanceAfter", note, created_at AS "createdAt"
       FROM ledger WHERE account_id = $1 ORDER BY id`,
      [accountId],
    );
  }
}
