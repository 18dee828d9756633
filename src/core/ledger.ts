/**
 * Diamonds: an append-only ledger of grants, charges and refunds, each charge and refund linked to
 * its job. `accounts.balance` is the running sum, kept in the same transaction as each entry and
 * guarded by CHECK (balance >= 0), so the balance cannot go negative even if a rule here broke.
 * Callers run charge/refund inside their own IMMEDIATE transaction with the job write.
 */
import type { WritableDB, ReadableDB } from './db/types';
import { InsufficientDiamonds } from './errors';

export type LedgerKind = 'grant' | 'charge' | 'refund';
export type LedgerEntry = {
  id: number;
  accountId: string;
  kind: LedgerKind;
  amount: number;
  jobId: string | null;
  balanceAfter: number;
  note: string | null;
  createdAt: string;
};

export function balanceOf(db: ReadableDB, accountId: string): number {
  const row = db.prepare('SELECT balance FROM accounts WHERE id = ?').get(accountId) as
    | { balance: number }
    | undefined;
  if (!row) throw new Error(`no account ${accountId}`);
  return row.balance;
}

function append(
  db: WritableDB,
  accountId: string,
  kind: LedgerKind,
  amount: number,
  jobId: string | null,
  note: string | null,
  now: Date,
): number {
  const after = balanceOf(db, accountId) + amount;
  db.prepare('UPDATE accounts SET balance = ? WHERE id = ?').run(after, accountId);
  db.prepare(
    `INSERT INTO ledger (account_id, kind, amount, job_id, balance_after, note, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(accountId, kind, amount, jobId, after, note, now.toISOString());
  return after;
}

export function grant(db: WritableDB, accountId: string, amount: number, now: Date, note?: string): number {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError('grant must be a whole number >= 0');
  return append(db, accountId, 'grant', amount, null, note ?? null, now);
}

/** Charges `price` for `jobId`; throws InsufficientDiamonds (nothing written) when short. */
export function charge(db: WritableDB, accountId: string, jobId: string, price: number, now: Date): number {
  const balance = balanceOf(db, accountId);
  if (balance < price) throw new InsufficientDiamonds(price, balance);
  if (price === 0) return balance;
  return append(db, accountId, 'charge', -price, jobId, null, now);
}

/**
 * Refunds the charge of `jobId`, at most once: returns the refunded amount, or 0 when there was
 * no charge or it was already refunded.
 */
export function refund(db: WritableDB, jobId: string, now: Date, note: string): number {
  const chargeRow = db
    .prepare("SELECT account_id AS accountId, amount FROM ledger WHERE job_id = ? AND kind = 'charge'")
    .get(jobId) as { accountId: string; amount: number } | undefined;
  if (!chargeRow) return 0;
  const already = db.prepare("SELECT 1 FROM ledger WHERE job_id = ? AND kind = 'refund'").get(jobId);
  if (already) return 0;
  append(db, chargeRow.accountId, 'refund', -chargeRow.amount, jobId, note, now);
  return -chargeRow.amount;
}

export function entriesFor(db: ReadableDB, accountId: string): LedgerEntry[] {
  return db
    .prepare(
      `SELECT id, account_id AS accountId, kind, amount, job_id AS jobId, balance_after AS balanceAfter,
              note, created_at AS createdAt
       FROM ledger WHERE account_id = ? ORDER BY id`,
    )
    .all(accountId) as LedgerEntry[];
}
