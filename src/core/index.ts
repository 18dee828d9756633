/**
 * The service core as a library: open a data folder, get the endpoint service, the admin
 * operations and the job runner, wired to one SQLite file and one blob store.
 */
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from './db/open';
import type { WritableDB } from './db/types';
import { BlobStore } from './media/blob-store';
import { openBlobContent } from './media/blobs-url';
import { EMBEDDED_ORIGIN, ImageResolver } from './media/resolve';
import { JobRunner } from './jobs/runner';
import { Service } from './service';
import { RequestCounter } from './request-counter';
import { KeyCache } from './key-cache';
import { loadCatalog, type Catalog } from './catalog';
import { createLocalProvider } from './providers/local';
import type { ProviderAdapter } from './providers/types';
import { loadProviderConfig, type ProviderKeys } from './providers/remote/config';
import { createRoutedProvider } from './providers/remote/routed';
import { systemClock, type Clock } from './clock';
import * as keys from './keys';
import { grant, balanceOf } from './ledger';
import { AdminError } from './errors';

export { EMBEDDED_ORIGIN as EMBEDDED_BASE_URL } from './media/resolve';

export type CoreOptions = {
  /** The SQLite file and, unless `blobsUrl` is set, the blob files; with it, scratch copies only. */
  dataDir: string;
  /** `s3://bucket?endpoint=…&region=…&forcePathStyle=true` (credentials from AWS_*); files under dataDir when absent. */
  blobsUrl?: string;
  publicBaseUrl?: string;
  /** Server mode refuses image URLs to private networks unless this is set (SSRF). */
  allowPrivateUrls?: boolean;
  concurrency?: number;
  provider?: ProviderAdapter;
  /** AI provider keys from a secure store (the desktop app's keychain); DROPSHOOT_* variables win. */
  providerKeys?: ProviderKeys;
  catalog?: Catalog;
  clock?: Clock;
  fetchTimeoutMs?: number;
  /** A shot cut by this many crashes of the process running it fails (a crash loop); default 3. */
  maxInterruptions?: number;
  /** Resume jobs left `processing` by a previous process (default true). */
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
  db: WritableDB;
  catalog: Catalog;
  blobs: BlobStore;
  resolver: ImageResolver;
  runner: JobRunner;
  service: Service;
  admin: Admin;
  close(): Promise<void>;
};

export type Admin = ReturnType<typeof adminFor>;

export function openCore(opts: CoreOptions): Core {
  const clock = opts.clock ?? systemClock;
  const db = openDatabase(path.join(opts.dataDir, 'core.db'));
  const catalog = opts.catalog ?? loadCatalog();
  let content;
  try {
    content = openBlobContent({ blobsUrl: opts.blobsUrl, dataDir: opts.dataDir });
  } catch (err) {
    db.close();
    throw err;
  }
  const blobs = new BlobStore(db, content, opts.log);
  const resolver = new ImageResolver({
    blobs,
    catalog,
    publicBaseUrl: opts.publicBaseUrl ?? EMBEDDED_ORIGIN,
    allowPrivateUrls: opts.allowPrivateUrls ?? false,
    fetchTimeoutMs: opts.fetchTimeoutMs ?? 10_000,
  });
  // Real AI backends per tool from <data>/providers.json and DROPSHOOT_* variables; local otherwise.
  const provider = opts.provider ?? createRoutedProvider(loadProviderConfig(opts.dataDir, process.env, opts.providerKeys), createLocalProvider({ catalog }));
  const runner = new JobRunner({ db, blobs, resolver, provider, clock, concurrency: opts.concurrency ?? os.availableParallelism(), ...(opts.maxInterruptions !== undefined ? { maxInterruptions: opts.maxInterruptions } : {}), log: opts.log });
  const requests = new RequestCounter(db);
  const keyCache = new KeyCache(db);
  const service = new Service({
    db, blobs, catalog, resolver, runner, provider, clock, requests, keys: keyCache, log: opts.log,
    ...(opts.storageQuotaBytes !== undefined ? { storageQuotaBytes: opts.storageQuotaBytes } : {}),
  });
  // What a crash left between writing a file and recording it, and files of refused requests.
  // One sweep at a time; close waits for the one under way.
  let sweeping: Promise<void> = Promise.resolve();
  const sweep = () => {
    sweeping = sweeping.then(async () => {
      try {
        const removed = await blobs.sweepOrphans(opts.orphanGraceMs ?? 60 * 60_000);
        if (removed.files > 0) opts.log?.(`removed ${removed.files} unreferenced blob files (${removed.bytes} bytes)`);
      } catch (err) {
        opts.log?.(`blob sweep failed (next one in an hour): ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  };
  sweep();
  const sweeper = setInterval(sweep, 60 * 60_000).unref();
  if (opts.resumeJobs !== false) runner.resumeAll();
  return {
    db,
    catalog,
    blobs,
    resolver,
    runner,
    service,
    admin: adminFor(db, clock, () => keyCache.forget()),
    async close() {
      clearInterval(sweeper);
      await runner.close();
      await sweeping;
      requests.flush();
      db.close();
      await content.close();
    },
  };
}

/** Account administration (the CLI's `admin` commands); safe while a server uses the same file. */
export function adminFor(db: WritableDB, clock: Clock, onKeysChanged: () => void = () => {}) {
  const wholeNumber = (n: number, flag: string) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new AdminError(`${flag} must be a whole number >= 0`);
    return n;
  };
  return {
    createAccount(input: { email: string; diamonds: number; dailyCap?: number }) {
      const { email, apiKey, keyId } = keys.createAccount(db, { ...input, diamonds: wholeNumber(input.diamonds, '--diamonds') }, clock.now());
      return { email, apiKey, keyId };
    },
    createKey(input: { email: string; dailyCap?: number }) {
      return keys.createKey(db, input, clock.now());
    },
    /** The oldest unrevoked key of an account, or null: how the embedded client finds its own. */
    firstActiveKeyId(email: string): string | null {
      return keys.firstActiveKeyId(db, email);
    },
    revokeKey(keyId: string) {
      const revoked = keys.revokeKey(db, keyId, clock.now());
      onKeysChanged();
      return revoked;
    },
    grant(input: { email: string; diamonds: number }) {
      const amount = wholeNumber(input.diamonds, '--diamonds');
      return db.transaction(() => {
        const accountId = keys.accountIdByEmail(db, input.email);
        grant(db, accountId, amount, clock.now(), 'admin grant');
        return { diamondBalance: balanceOf(db, accountId) };
      }).immediate();
    },
  };
}
