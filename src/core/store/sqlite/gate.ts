/**
 * One SQLite connection, shared by every caller of the store, with transactions that span
 * awaits: while `transaction(fn)` runs, statements from anyone else would land inside it (and
 * be rolled back with it), so they wait their turn. Turns are strictly first come, first served
 * (a statement queued before a transaction runs before it), and a statement runs synchronously
 * when its turn comes, so nothing can slip in between. Code inside `fn` must use its `tx`: the
 * outer store refuses there instead of waiting for itself.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { WritableDB } from '../../db/types';

type Turn = { statement: () => void } | { transaction: () => void };

/** Runs one synchronous better-sqlite3 call now, or in its turn; its result or error as a promise. */
export type Gate = <T>(query: () => T) => Promise<T>;

const now = <T>(query: () => T): Promise<T> => {
  try {
    return Promise.resolve(query());
  } catch (err) {
    return Promise.reject(err as Error);
  }
};
/** A transaction's own store: the transaction already holds the connection. */
export const ungated: Gate = now;

export class TransactionGate {
  /** A transaction holds the connection (or has been given its turn). */
  private held = false;
  private readonly waiting: Turn[] = [];
  private readonly inside = new AsyncLocalStorage<true>();

  constructor(private readonly db: WritableDB) {}

  /** The outer store's gate: at once when the connection is free and nobody waits, else in turn. */
  readonly outside: Gate = <T>(query: () => T): Promise<T> => {
    if (!this.held && this.waiting.length === 0) return now(query);
    if (this.inside.getStore()) {
      return Promise.reject(
        new Error(
          'the outer store was used inside transaction(fn); use the transaction store passed to fn',
        ),
      );
    }
    return this.inTurn(query);
  };

  /** Like `outside`, but for work started from timers and shutdown, whatever context they came from. */
  readonly inTurn: Gate = <T>(query: () => T): Promise<T> => {
    if (!this.held && this.waiting.length === 0) return now(query);
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        statement: () => {
          try {
            resolve(query());
          } catch (err) {
            reject(err as Error);
          }
        },
      });
    });
  };

  /** BEGIN IMMEDIATE, fn, COMMIT (ROLLBACK and rethrow if fn throws); one transaction at a time, in turn. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inside.getStore()) {
      throw new Error(
        'transaction() called on the outer store inside transaction(fn); call it on the transaction store',
      );
    }
    if (this.held || this.waiting.length > 0) {
      await new Promise<void>((resolve) => this.waiting.push({ transaction: resolve }));
    }
    this.held = true;
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
      this.held = false;
      this.next();
    }
  }

  /** Hands the connection on: waiting statements run now, in order, up to the next transaction. */
  private next(): void {
    while (!this.held) {
      const turn = this.waiting.shift();
      if (!turn) return;
      if ('statement' in turn) turn.statement();
      else {
        this.held = true; // reserved for it until it begins
        turn.transaction();
      }
    }
  }
}

/** Base of the SQLite repositories: every method is one synchronous better-sqlite3 call, run in its turn. */
export abstract class SqliteRepository {
  constructor(
    protected readonly db: WritableDB,
    private readonly gate: Gate,
  ) {}

  protected run<T>(query: (db: WritableDB) => T): Promise<T> {
    return this.gate(() => query(this.db));
  }
}
