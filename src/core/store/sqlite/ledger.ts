import type { LedgerEntry, LedgerRepository, NewLedgerEntry } from '../types';
import { SqliteRepository } from './gate';

export class SqliteLedger extends SqliteRepository implements LedgerRepository {
  /** `forUpdate` needs nothing here: a transaction holds the file's write lock (BEGIN IMMEDIATE). */
  balanceOf(accountId: string): Promise<number | undefined> {
    return this.run(
      (db) =>
        (
          db.prepare('SELECT balance FROM accounts WHERE id = ?').get(accountId) as
            { balance: number } | undefined
        )?.balance,
    );
  }

  append(entry: NewLedgerEntry): Promise<number> {
    // Both statements or neither (a savepoint inside the caller's transaction). CHECK (balance >= 0)
    // refuses an entry that would overdraw; unique indexes a second charge or refund of one job.
    return this.run((db) =>
      db.transaction(() => {
        const row = db
          .prepare('UPDATE accounts SET balance = balance + ? WHERE id = ? RETURNING balance')
          .get(entry.amount, entry.accountId) as { balance: number } | undefined;
        if (!row) throw new Error(`no account ${entry.accountId}`);
        db.prepare(
          `INSERT INTO ledger (account_id, kind, amount, job_id, balance_after, note, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          entry.accountId,
          entry.kind,
          entry.amount,
          entry.jobId,
          row.balance,
          entry.note,
          entry.createdAt,
        );
        return row.balance;
      })(),
    );
  }

  chargeOf(jobId: string): Promise<{ accountId: string; amount: number } | undefined> {
    return this.run(
      (db) =>
        db
          .prepare(
            "SELECT account_id AS accountId, amount FROM ledger WHERE job_id = ? AND kind = 'charge'",
          )
          .get(jobId) as { accountId: string; amount: number } | undefined,
    );
  }

  hasRefund(jobId: string): Promise<boolean> {
    return this.run(
      (db) =>
        db.prepare("SELECT 1 FROM ledger WHERE job_id = ? AND kind = 'refund'").get(jobId) !==
        undefined,
    );
  }

  entriesFor(accountId: string): Promise<LedgerEntry[]> {
    return this.run(
      (db) =>
        db
          .prepare(
            `SELECT id, account_id AS accountId, kind, amount, job_id AS jobId, balance_after AS balanceAfter, note, created_at AS createdAt
             FROM ledger WHERE account_id = ? ORDER BY id`,
          )
          .all(accountId) as LedgerEntry[],
    );
  }
}
