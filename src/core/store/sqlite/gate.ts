/**
 * One SQLite connection, shared by every caller of the store, with transactions that span
 * awaits: while `transaction(fn)` runs, statements from anyone else would land inside it (and
 * be rolled back with it), so callers of the outer store wait until it ends, and transactions
 * run one after another. Code inside `fn` must use its `tx`: the outer store throws there
 * instead of waiting for itself.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { WritableDB } from '../../db/types';

export class TransactionGate {
  private current: Promise<void> | null = null;
  private readonly inside = new AsyncLocalStorage<true>();

  constructor(private readonly db: WritableDB) {}

  /**
   * The open transaction's end, or undefined when none is open. Callers loop until undefined and
   * then run their statement in the same tick, so no transaction can begin in between.
   */
  busy(): Promise<void> | undefined {
    return this.current ?? undefined;
  }

  /** busy() for the outer store: refuses to wait from inside the transaction itself (a deadlock). */
  outside(): Promise<void> | undefined {
    if (!this.current) return undefined;
    if (this.inside.getStore()) {
      throw new Error('the outer store was used inside transaction(fn); use the transaction store passed to fn');
    }
    return this.current;
  }

  /** BEGIN IMMEDIATE, fn, COMMIT (ROLLBACK and rethrow if fn throws); one transaction at a time. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inside.getStore()) {
      throw new Error('transaction() called on the outer store inside transaction(fn); call it on the transaction store');
    }
    while (this.current) await this.current;
    let end!: () => void;
    this.current = new Promise<void>((resolve) => (end = resolve));
    try {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const result = await this.inside.run(true, fn);
        this.db.exec('COMMIT');
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    } finally {
      this.current = null;
      end();
    }
  }
}

/** Runs `then` once no transaction is open, in the same tick as the last check. */
export async function whenFree<T>(busy: () => Promise<void> | undefined, then: () => T): Promise<T> {
  for (let wait = busy(); wait; wait = busy()) await wait;
  return then();
}

/** Waits for an open transaction to end (outer store), or never (a transaction's own store). */
export type Gate = () => Promise<void> | undefined;
export const ungated: Gate = () => undefined;

/** Base of the SQLite repositories: every method is one synchronous better-sqlite3 call, run once the gate is open. */
export abstract class SqliteRepository {
  constructor(
    protected readonly db: WritableDB,
    private readonly gate: Gate,
  ) {}

  protected run<T>(query: (db: WritableDB) => T): Promise<T> {
    return whenFree(this.gate, () => query(this.db));
  }
}
