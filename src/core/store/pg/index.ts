/**
 * The PostgreSQL store (team mode): every repository on one pool, `transaction(fn)` on one
 * pooled client in READ COMMITTED, exact through row locks (the account row for the balance, the
 * key's counter row for the cap, SKIP LOCKED for job claims), and re-run on 40001/40P01.
 * Opening migrates the database (once, under an advisory lock, whoever starts first).
 */
import type { Store } from '../types';
import { PgAccounts, PgKeys } from './accounts';
import { PgBlobRows } from './blobs';
import { PoolExecutor, inTransaction, type Executor } from './executor';
import { PgIdempotency } from './idempotency';
import { JobNotices } from './job-notices';
import { PgJobs } from './jobs';
import { PgLedger } from './ledger';
import { migratePostgres } from './migrate';
import { openPgPool, type PgPool, type PgPoolOptions } from './pool';
import { PgRequestCounts } from './request-counts';
import { PgTemplateSets } from './template-sets';
import { parsePostgresUrl, scrubbedError } from './url';

export type PostgresStoreOptions = PgPoolOptions & {
  /** Run the migrations on open (default true). */
  migrate?: boolean;
  /**
   * Where the process LISTENs for new jobs, when the URL goes through a pooler in transaction
   * mode (PgBouncer), which loses LISTEN: a direct connection to the same database.
   */
  listenUrl?: string;
  /** Where the listening connection says it fell back to polling (and came back). */
  log?: (message: string) => void;
};

class PgStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly accounts;
  readonly keys;
  readonly ledger;
  readonly jobs;
  readonly requests: PgRequestCounts;
  readonly idempotency;
  readonly templates;
  readonly blobs;

  constructor(
    private readonly handle: PgPool,
    ex: Executor,
    private readonly inTx: boolean,
    /** The listening connection (outer store only). */
    private readonly notices?: JobNotices,
  ) {
    this.accounts = new PgAccounts(ex);
    this.keys = new PgKeys(ex);
    this.ledger = new PgLedger(ex);
    this.jobs = new PgJobs(ex, notices);
    this.requests = new PgRequestCounts(ex);
    this.idempotency = new PgIdempotency(ex);
    this.templates = new PgTemplateSets(ex);
    this.blobs = new PgBlobRows(ex);
  }

  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.inTx) return fn(this); // joins the open transaction
    return inTransaction(this.handle, (ex) => fn(new PgStore(this.handle, ex, true)));
  }

  async ping(): Promise<void> {
    try {
      await this.handle.pool.query('SELECT max(version) FROM schema_migrations');
    } catch (err) {
      throw scrubbedError(err, this.handle.target, 'PostgreSQL is not answering');
    }
  }

  async close(): Promise<void> {
    if (this.inTx) throw new Error('close() is for the outer store');
    try {
      await this.notices?.close();
      await this.requests.close();
    } finally {
      await this.handle.pool.end();
    }
  }
}

/** Opens the PostgreSQL store at `url` (postgres://…), migrated unless told otherwise. */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<Store> {
  // Checked before anything connects: a bad listen URL is a configuration error at start.
  if (options.listenUrl !== undefined) parsePostgresUrl(options.listenUrl);
  const handle = openPgPool(url, options);
  try {
    if (options.migrate ?? true) await migratePostgres(handle);
  } catch (err) {
    await handle.pool.end().catch(() => undefined);
    throw err;
  }
  const notices = new JobNotices(handle, {
    ...(options.listenUrl !== undefined
      ? { listenTarget: parsePostgresUrl(options.listenUrl) }
      : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return new PgStore(handle, new PoolExecutor(handle), false, notices);
}
