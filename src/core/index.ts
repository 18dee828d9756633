/**
 * The service core as a library: open a data folder, get the endpoint service, the admin
 * operations and the job runner, wired to one store (the SQLite file under the data folder, or
 * PostgreSQL when a database URL is given) and one blob store.
 */
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from './store/sqlite';
import type { Store } from './store/types';
import { BlobStore } from './media/blob-store';
import { openBlobContent } from './media/blobs-url';
import { EMBEDDED_ORIGIN, ImageResolver } from './media/resolve';
import { JobRunner } from './jobs/runner';
import { LeaseLoop } from './jobs/lease-loop';
import { Service } from './service';
import { KeyCache } from './key-cache';
import { loadCatalog, type Catalog } from './catalog';
import { createLocalProvider } from './providers/local';
import type { ProviderAdapter } from './providers/types';
import { loadProviderConfig, type ProviderKeys } from './providers/remote/config';
import { createRoutedProvider } from './providers/remote/routed';
import { systemClock, type Clock } from './clock';
import * as keys from './keys';
import { grant } from './ledger';
import { AdminError } from './errors';

export { EMBEDDED_ORIGIN as EMBEDDED_BASE_URL } from './media/resolve';

export type CoreOptions = {
  /**
   * The SQLite file (unless `databaseUrl` is set) and, unless `blobsUrl` is set, the blob files;
   * with both, scratch copies only.
   */
  dataDir: string;
  /** `postgres://…` (team mode: shared by any number of processes); SQLite at `<dataDir>/core.db` when absent. */
  databaseUrl?: string;
  /** PostgreSQL: a direct URL for LISTEN when `databaseUrl` goes through PgBouncer (else the poll only). */
  databaseListenUrl?: string;
  /** `s3://bucket?endpoint=…&region=…&forcePathStyle=true` (credentials from AWS_*); files under dataDir when absent. */
  blobsUrl?: string;
  /** With `blobsUrl`: most bytes of scratch copies (the providers' inputs) kept here; default 2 GiB. */
  blobScratchLimitBytes?: number;
  publicBaseUrl?: string;
  /** Server mode refuses image URLs to private networks unless this is set (SSRF). */
  allowPrivateUrls?: boolean;
  /**
   * Units run at once by this process. Default: one per core; on PostgreSQL at least `workers`
   * (a job's provider mostly waits on the network there).
   */
  concurrency?: number;
  /**
   * PostgreSQL (team mode): jobs this process claims and runs at once under a lease
   * (`serve --workers N`); 0 = API only, another process runs them. Default 4. SQLite: unused
   * (every job of the file runs in this process).
   */
  workers?: number;
  /** PostgreSQL: how long a lease holds a job (default 30 s): a killed process's jobs wait this long. */
  leaseMs?: number;
  /**
   * Graceful shutdown (`stopJobs`): how long jobs under way may run on to their end first (no
   * new job is started meanwhile); what is left then is cut (SQLite: resumed at next start;
   * PostgreSQL: its lease released for another process). Default 0 (the desktop quits at once);
   * `serve` sets 25 s (`--drain-seconds`).
   */
  drainMs?: number;
  provider?: ProviderAdapter;
  /** AI provider keys from a secure store (the desktop app's keychain); DROPSHOOT_* variables win. */
  providerKeys?: ProviderKeys;
  catalog?: Catalog;
  clock?: Clock;
  fetchTimeoutMs?: number;
  /** A shot cut by this many crashes of the process running it fails (a crash loop); default 3. */
  maxInterruptions?: number;
  /** How long the blob store may fail a job's input reads before its shot fails (default 10 min). */
  inputReadGiveUpMs?: number;
  /**
   * Resume jobs left `processing` by a previous process (default true). SQLite only: on
   * PostgreSQL the lease loop takes every job whose lease is free, whoever created it.
   */
  resumeJobs?: boolean;
  /**
   * Bytes of uploaded and fetched images one account may keep (413 past it); unbounded when
   * absent (embedded mode: the disk is the user's own). `startServer` sets a default.
   */
  storageQuotaBytes?: number;
  /** Blob files no row names are removed at start-up and hourly once older than this (default 1 h). */
  orphanGraceMs?: number;
  log?: (message: string) => void;
};

export type Core = {
  store: Store;
  catalog: Catalog;
  blobs: BlobStore;
  resolver: ImageResolver;
  runner: JobRunner;
  /** Team mode (PostgreSQL): the loop that claims jobs under a lease; undefined on SQLite. */
  leaseLoop: LeaseLoop | undefined;
  service: Service;
  admin: Admin;
  /**
   * Stops running jobs (shutdown, not a crash): no new job starts, those under way may finish
   * within `drainMs`; then SQLite marks the rest to resume at next start, and on PostgreSQL the
   * loop releases their leases, so another process takes them at once. `close` does this too; a
   * server calls it first, while it drains requests.
   */
  stopJobs(): Promise<void>;
  close(): Promise<void>;
};

/** Jobs one team-mode process runs at once when `workers` is not given. */
export const DEFAULT_WORKERS = 4;

export type Admin = ReturnType<typeof adminFor>;

/** Opens the core on its store (`databaseUrl`, else `<dataDir>/core.db`); resolves once unfinished jobs are queued again. */
export async function openCore(opts: CoreOptions): Promise<Core> {
  // The embedded core (desktop, run) never loads the PostgreSQL driver.
  const store =
    opts.databaseUrl === undefined
      ? openSqliteStore(path.join(opts.dataDir, 'core.db'))
      : await (
          await import('./store/open-store')
        ).openStore({
          databaseUrl: opts.databaseUrl,
          dataDir: opts.dataDir,
          listenUrl: opts.databaseListenUrl,
          ...(opts.log ? { log: opts.log } : {}),
        });
  try {
    return await coreOn(store, opts);
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** The core on an open store (closed with the core). */
export async function coreOn(store: Store, opts: CoreOptions): Promise<Core> {
  const clock = opts.clock ?? systemClock;
  const catalog = opts.catalog ?? loadCatalog();
  const content = openBlobContent({
    blobsUrl: opts.blobsUrl,
    dataDir: opts.dataDir,
    scratchLimitBytes: opts.blobScratchLimitBytes,
    log: opts.log,
  });
  const blobs = new BlobStore(store, content, opts.log);
  const resolver = new ImageResolver({
    blobs,
    catalog,
    publicBaseUrl: opts.publicBaseUrl ?? EMBEDDED_ORIGIN,
    allowPrivateUrls: opts.allowPrivateUrls ?? false,
    fetchTimeoutMs: opts.fetchTimeoutMs ?? 10_000,
  });
  // Real AI backends per tool from <data>/providers.json and DROPSHOOT_* variables; local otherwise.
  let provider;
  try {
    provider =
      opts.provider ??
      createRoutedProvider(
        loadProviderConfig(opts.dataDir, process.env, opts.providerKeys),
        createLocalProvider({ catalog }),
      );
  } catch (err) {
    await content.close();
    throw err;
  }
  const team = store.dialect === 'postgres';
  const workers = opts.workers ?? DEFAULT_WORKERS;
  const runner = new JobRunner({
    store,
    blobs,
    resolver,
    provider,
    clock,
    concurrency: opts.concurrency ?? Math.max(os.availableParallelism(), team ? workers : 0),
    ...(opts.maxInterruptions !== undefined ? { maxInterruptions: opts.maxInterruptions } : {}),
    ...(opts.inputReadGiveUpMs !== undefined ? { inputReadGiveUpMs: opts.inputReadGiveUpMs } : {}),
    log: opts.log,
  });
  // Team mode: any process runs any job, claimed under a lease (never two at once). Resuming
  // "every processing job" at start, as one process does with its SQLite file, would take other
  // live processes' jobs, so the loop takes only jobs whose lease is free or ran out.
  const leaseLoop = team
    ? new LeaseLoop({
        jobs: store.jobs,
        workers,
        ...(opts.leaseMs !== undefined ? { leaseMs: opts.leaseMs } : {}),
        runJob: (job, signal) => runner.runLeased(job, signal),
        ...(opts.log ? { log: opts.log } : {}),
      })
    : undefined;
  const keyCache = new KeyCache(store);
  const service = new Service({
    store,
    blobs,
    catalog,
    resolver,
    runner,
    ...(leaseLoop ? { schedule: () => leaseLoop.wake() } : {}),
    provider,
    clock,
    keys: keyCache,
    log: opts.log,
    ...(opts.storageQuotaBytes !== undefined ? { storageQuotaBytes: opts.storageQuotaBytes } : {}),
  });
  // What a crash left between writing a file and recording it, and files of refused requests.
  // One sweep at a time; close waits for the one under way.
  let sweeping: Promise<void> = Promise.resolve();
  const sweep = () => {
    sweeping = sweeping.then(async () => {
      try {
        const removed = await blobs.sweepOrphans(opts.orphanGraceMs ?? 60 * 60_000);
        if (removed.files > 0)
          opts.log?.(`removed ${removed.files} unreferenced blob files (${removed.bytes} bytes)`);
      } catch (err) {
        opts.log?.(
          `blob sweep failed (next one in an hour): ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    });
  };
  sweep();
  const sweeper = setInterval(sweep, 60 * 60_000).unref();
  if (team && opts.blobsUrl === undefined)
    opts.log?.(
      `blobs are files under ${opts.dataDir} while the database is shared: every process of this service must use that same folder (or give --blobs s3://…)`,
    );
  if (leaseLoop) leaseLoop.start();
  else if (opts.resumeJobs !== false) await runner.resumeAll();
  let jobsStopped: Promise<void> | undefined;
  const stopJobs = () =>
    (jobsStopped ??= (async () => {
      const drainMs = opts.drainMs ?? 0;
      // The loop first: once it stops claiming, runs the runner's abort ends are not replaced.
      if (leaseLoop) {
        const released = await leaseLoop.stop({ drainMs });
        if (released > 0) opts.log?.(`released ${released} job leases for other processes`);
      } else if (drainMs > 0) {
        await runner.drain(drainMs);
      }
      await runner.stop();
    })());
  return {
    store,
    catalog,
    blobs,
    resolver,
    runner,
    leaseLoop,
    service,
    admin: adminFor(store, clock, () => keyCache.forget()),
    stopJobs,
    async close() {
      clearInterval(sweeper);
      await stopJobs();
      await runner.close();
      await sweeping;
      await store.close();
      await content.close();
    },
  };
}

/** Account administration (the CLI's `admin` commands); safe while a server uses the same file. */
export function adminFor(store: Store, clock: Clock, onKeysChanged: () => void = () => {}) {
  const wholeNumber = (n: number, flag: string) => {
    if (!Number.isSafeInteger(n) || n < 0)
      throw new AdminError(`${flag} must be a whole number >= 0`);
    return n;
  };
  return {
    async createAccount(input: { email: string; diamonds: number; dailyCap?: number }) {
      const { email, apiKey, keyId } = await keys.createAccount(
        store,
        { ...input, diamonds: wholeNumber(input.diamonds, '--diamonds') },
        clock.now(),
      );
      return { email, apiKey, keyId };
    },
    createKey(input: { email: string; dailyCap?: number }) {
      return keys.createKey(store, input, clock.now());
    },
    /** The oldest unrevoked key of an account, or null: how the embedded client finds its own. */
    firstActiveKeyId(email: string): Promise<string | null> {
      return keys.firstActiveKeyId(store, email);
    },
    async revokeKey(keyId: string) {
      const revoked = await keys.revokeKey(store, keyId, clock.now());
      onKeysChanged();
      return revoked;
    },
    grant(input: { email: string; diamonds: number }) {
      const amount = wholeNumber(input.diamonds, '--diamonds');
      return store.transaction(async (tx) => {
        const accountId = await keys.accountIdByEmail(tx, input.email);
        return { diamondBalance: await grant(tx, accountId, amount, clock.now(), 'admin grant') };
      });
    },
  };
}
