/**
 * The SQLite store: the embedded default and one-process `serve`. One better-sqlite3 connection
 * (WAL, prepared statements cached by SQL text) for every repository; the file and its
 * migrations are the core's as before (`core/db`).
 */
import { openDatabase } from '../../db/open';
import type { WritableDB } from '../../db/types';
import type { Store } from '../types';
import { SqliteAccounts } from './accounts';
import { SqliteBlobRows } from './blobs';
import { type Gate, TransactionGate, ungated } from './gate';
import { SqliteIdempotency } from './idempotency';
import { SqliteJobs } from './jobs';
import { SqliteKeys } from './keys';
import { SqliteLedger } from './ledger';
import { CountTallies, SqliteRequestCounts } from './request-counts';
import { SqliteTemplateSets } from './template-sets';

class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly accounts;
  readonly keys;
  readonly ledger;
  readonly jobs;
  readonly requests;
  readonly idempotency;
  readonly templates;
  readonly blobs;

  constructor(
    private readonly db: WritableDB,
    private readonly gate: TransactionGate,
    private readonly tallies: CountTallies,
    private readonly outer: SqliteStore | null,
  ) {
    // The outer store's calls wait for an open transaction; a transaction's own calls run at once.
    const wait: Gate = outer ? ungated : gate.outside;
    this.accounts = new SqliteAccounts(db, wait);
    this.keys = new SqliteKeys(db, wait);
    this.ledger = new SqliteLedger(db, wait);
    this.jobs = new SqliteJobs(db, wait);
    this.requests = new SqliteRequestCounts(tallies, wait);
    this.idempotency = new SqliteIdempotency(db, wait);
    this.templates = new SqliteTemplateSets(db, wait);
    this.blobs = new SqliteBlobRows(db, wait);
  }

  private txStore: SqliteStore | undefined;

  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.outer) return fn(this); // joins the open transaction
    this.txStore ??= new SqliteStore(this.db, this.gate, this.tallies, this);
    const tx = this.txStore;
    return this.gate.run(() => fn(tx));
  }

  async ping(): Promise<void> {
    // Reads the file (not only the connection): a deleted or corrupt database fails here.
    await (this.outer ? ungated : this.gate.outside)(() =>
      this.db.prepare('SELECT COUNT(*) FROM sqlite_master').get(),
    );
  }

  async close(): Promise<void> {
    if (this.outer) throw new Error('close() is for the outer store');
    await this.tallies.flush();
    await this.gate.inTurn(() => this.db.close());
  }
}

/** Opens (creating and migrating as needed) the core's SQLite file as a Store. */
export function openSqliteStore(file: string): Store {
  const db = openDatabase(file);
  const gate = new TransactionGate(db);
  return new SqliteStore(db, gate, new CountTallies(db, gate.inTurn), null);
}
