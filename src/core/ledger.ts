/**
 * Diamonds: an append-only ledger of grants, charges and refunds, each charge and refund linked to
 * its job. The account's balance is the running sum, kept in the same transaction as each entry
 * and guarded by the database (never below 0), so the balance cannot go negative even if a rule
 * here broke. Callers run charge and refund inside their own transaction with the job write.
 */
import type { LedgerEntry, Store } from './store/types';
import { InsufficientDiamonds } from './errors';

export type { LedgerEntry, LedgerKind } from './store/types';

export async function balanceOf(
  store: Store,
  accountId: string,
  forUpdate = false,
): Promise<number> {
  const balance = await store.ledger.balanceOf(accountId, { forUpdate });
  if (balance === undefined) throw new Error(`no account ${accountId}`);
  return balance;
}

export function grant(
  tx: Store,
  accountId: string,
  amount: number,
  now: Date,
  note?: string,
): Promise<number> {
  if (!Number.isSafeInteger(amount) || amount < 0)
    throw new RangeError('grant must be a whole number >= 0');
  return tx.ledger.append({
    accountId,
    kind: 'grant',
    amount,
    jobId: null,
    note: note ?? null,
    createdAt: now.toISOString(),
  });
}

/** Charges `price` for `jobId` (inside a transaction); throws InsufficientDiamonds (nothing written) when short. */
export async function charge(
  tx: Store,
  accountId: string,
  jobId: string,
  price: number,
  now: Date,
): Promise<number> {
  const balance = await balanceOf(tx, accountId, true);
  if (balance < price) throw new InsufficientDiamonds(price, balance);
  if (price === 0) return balance;
  return tx.ledger.append({
    accountId,
    kind: 'charge',
    amount: -price,
    jobId,
    note: null,
    createdAt: now.toISOString(),
  });
}

/**
 * Refunds the charge of `jobId` (inside a transaction), at most once: returns the refunded
 * amount, or 0 when there was no charge or it was already refunded.
 */
export async function refund(tx: Store, jobId: string, now: Date, note: string): Promise<number> {
  const charged = await tx.ledger.chargeOf(jobId);
  if (!charged || (await tx.ledger.hasRefund(jobId))) return 0;
  await balanceOf(tx, charged.accountId, true); // the account row is the lock
  await tx.ledger.append({
    accountId: charged.accountId,
    kind: 'refund',
    amount: -charged.amount,
    jobId,
    note,
    createdAt: now.toISOString(),
  });
  return -charged.amount;
}

export function entriesFor(store: Store, accountId: string): Promise<LedgerEntry[]> {
  return store.ledger.entriesFor(accountId);
}
