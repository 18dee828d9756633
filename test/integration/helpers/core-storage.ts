/**
 * Looking into a test server's storage from the outside, the same way on both set-ups the /v1
 * files run on (SQLite + files under the data folder, or PostgreSQL + a bucket): through the
 * core's own Store and blob store opened on the server's configuration, so a test asserts rows
 * and stored bytes without knowing where they live.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { openBlobContent } from '../../../src/core/media/blobs-url';
import { openStore, storeTarget } from '../../../src/core/store/open-store';
import type { Store } from '../../../src/core/store/types';
import type { TestServer } from './server';

/** Where a core keeps its rows and bytes: a test server, or a core a test opened on its own. */
export type CoreStorage = Pick<TestServer, 'storage' | 'dataDir'>;

/** Runs `fn` on a Store opened on the server's database (read-side use; no migration). */
export async function withCoreStore<T>(
  server: CoreStorage,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openStore({
    databaseUrl: server.storage.databaseUrl,
    dataDir: server.dataDir,
    maxConnections: 2,
    migrate: false,
  });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The job's ledger entries (kind and amount), oldest first; [] for a job that does not exist. */
export function ledgerOfJob(
  server: CoreStorage,
  jobId: string,
): Promise<{ kind: string; amount: number }[]> {
  return withCoreStore(server, async (store) => {
    const job = await store.jobs.get(jobId);
    if (!job) return [];
    const entries = await store.ledger.entriesFor(job.accountId);
    return entries.filter((e) => e.jobId === jobId).map(({ kind, amount }) => ({ kind, amount }));
  });
}

/**
 * Rows of a query the Store has no method for (test-only questions such as "how many blob rows
 * does this account have"), run on the server's database: `?` placeholders, SQL both dialects
 * read alike (the table and column names are the same in both schemas). Cast counts
 * (`CAST(COUNT(*) AS INTEGER)`): PostgreSQL's bigint would arrive as text.
 */
export async function coreRows<T extends Record<string, unknown>>(
  server: CoreStorage,
  sql: string,
  ...params: unknown[]
): Promise<T[]> {
  const target = storeTarget({ databaseUrl: server.storage.databaseUrl, dataDir: server.dataDir });
  if (target.dialect === 'sqlite') {
    const db = new Database(target.file, { readonly: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    if (target.schema !== undefined) await client.query(`SET search_path TO "${target.schema}"`);
    let n = 0;
    const res = await client.query(
      sql.replace(/\?/g, () => `$${++n}`),
      params,
    );
    return res.rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * What the server keeps of stored bytes: every listed object and its bytes (stray temp files
 * included) in a local store. A shared store (a bucket) never deletes bytes a refused request
 * staged (another process may be recording the same hash; the orphan sweep takes them after its
 * grace period), so there only objects some blob row names count: unnamed bytes are the sweep's.
 */
export async function storedBlobs(server: CoreStorage): Promise<{ files: number; bytes: number }> {
  const content = openBlobContent({ blobsUrl: server.storage.blobsUrl, dataDir: server.dataDir });
  try {
    const named = content.shared
      ? await withCoreStore(server, (store) => store.blobs.recordedShas())
      : undefined;
    let files = 0;
    let bytes = 0;
    for await (const item of content.list()) {
      if (named && (item.sha256 === null || !named.has(item.sha256))) continue;
      files++;
      bytes += item.size;
    }
    return { files, bytes };
  } finally {
    await content.close();
  }
}
