/**
 * Where a repository's statements run: on the pool (each call atomic on its own) or on the one
 * client of an open transaction. `atomic` groups statements that must land together: on the pool
 * it opens a short transaction, inside a transaction it just runs them there.
 *
 * Errors: what the server refused (constraint violations, serialization failures) is rethrown as
 * pg raised it; anything else (cannot connect, connection lost, the session terminated by the
 * server) becomes DatabaseUnavailable with the credentials scrubbed, so callers can tell a
 * database that went away from a statement that was refused. A connection lost on COMMIT is
 * marked `commitOutcomeUnknown`: the server may have committed (only the answer was lost), unlike
 * a loss before it, which the server always rolls back.
 */
import pg from 'pg';
import { connect, type PgPool } from './pool';
import { scrubbedError } from './url';

export type Row = Record<string, unknown>;

export interface Executor {
  /** True on the client of an open transaction (statements commit with it), false on the pool. */
  readonly inTransaction: boolean;
  query<R extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Statements that must land together (a transaction of their own, or the open one). */
  atomic<T>(fn: (ex: Executor) => Promise<T>): Promise<T>;
}

/** Serialization failure and deadlock: the transaction did nothing and may simply be run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 8;

export const isRetryable = (err: unknown): boolean =>
  err instanceof pg.DatabaseError && err.code !== undefined && RETRYABLE.has(err.code);

/**
 * SQLSTATEs that say the connection, not the statement, failed: connection exceptions (08),
 * the server ending the session (57P01 admin shutdown / pg_terminate_backend, 57P02 crash
 * shutdown, 57P03 cannot connect now) and too many connections (53300).
 */
const CONNECTION_LOST = /^(08...|57P0[1-3]|53300)$/;

function rethrow(err: unknown, handle: PgPool, atCommit = false): never {
  if (err instanceof pg.DatabaseError && !CONNECTION_LOST.test(err.code ?? '')) throw err;
  throw scrubbedError(
    err,
    handle.target,
    atCommit ? 'PostgreSQL connection lost on COMMIT' : 'PostgreSQL query failed',
    atCommit,
  );
}

/**
 * A randomized pause before a retry, growing with the attempt (~10 ms, 20, 40 … 200): long enough
 * for the transaction that won to commit, so the loser does not grab one of its rows again first
 * and deadlock anew.
 */
const backoff = (attempt: number) =>
  new Promise((resolve) =>
    setTimeout(resolve, Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random())),
  );

/**
 * Runs `fn` in a READ COMMITTED transaction on one pooled client, again from the start on
 * 40001/40P01. A statement that fails inside aborts a PostgreSQL transaction (unlike SQLite,
 * where only that statement is undone); if `fn` caught such a failure and carried on, COMMIT
 * would quietly roll everything back, so the transaction is refused with that failure instead.
 */
export async function inTransaction<T>(
  handle: PgPool,
  fn: (ex: ClientExecutor) => Promise<T>,
): Promise<T> {
  const control = async (client: pg.PoolClient, sql: string) => {
    try {
      await client.query(sql);
    } catch (err) {
      rethrow(err, handle, sql === 'COMMIT');
    }
  };
  for (let attempt = 1; ; attempt++) {
    const client = await connect(handle);
    // A checked-out client whose connection is cut (pg_terminate_backend, a restart) emits
    // 'error' besides failing its query; the pool listens only while the client is idle, and an
    // unheard 'error' would take the whole process down. The failed query reports it here.
    client.on('error', ignoreConnectionError);
    const ex = new ClientExecutor(client, handle);
    let broken = false;
    try {
      await control(client, 'BEGIN ISOLATION LEVEL READ COMMITTED');
      const result = await fn(ex);
      if (ex.failure !== undefined) {
        const reason = ex.failure instanceof Error ? ex.failure.message : String(ex.failure);
        throw new Error(
          `transaction rolled back: a statement in it failed (${reason}), which ends a PostgreSQL transaction`,
          { cause: ex.failure },
        );
      }
      await control(client, 'COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true; // the connection is gone or confused: it is not pooled again
      }
      // A retryable failure that fn swallowed still means "run it again".
      const cause = isRetryable(ex.failure) ? ex.failure : err;
      // Anything else (a domain rule thrown by fn, a constraint) goes to the caller as it was.
      if (!isRetryable(cause) || attempt >= MAX_ATTEMPTS) throw err;
    } finally {
      client.off('error', ignoreConnectionError);
      client.release(broken);
    }
    await backoff(attempt);
  }
}

function ignoreConnectionError(): void {}

export class PoolExecutor implements Executor {
  readonly inTransaction = false;

  constructor(private readonly handle: PgPool) {}

  async query<R extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.handle.pool.query<R>(sql, params as unknown[])).rows;
      } catch (err) {
        // One statement on its own rolls back whole, so running it again is safe.
        if (isRetryable(err) && attempt < MAX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        rethrow(err, this.handle);
      }
    }
  }

  atomic<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    return inTransaction(this.handle, fn);
  }
}

export class ClientExecutor implements Executor {
  readonly inTransaction = true;
  /** The first statement that failed in this transaction: after it, PostgreSQL runs no more. */
  failure: unknown = undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly handle: PgPool,
  ) {}

  async query<R extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    try {
      return (await this.client.query<R>(sql, params as unknown[])).rows;
    } catch (err) {
      this.failure ??= err;
      rethrow(err, this.handle);
    }
  }

  atomic<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    return fn(this);
  }
}
