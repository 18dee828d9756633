/**
 * Per-test in-process server (programmatic `startServer`): fresh temp data dir, 127.0.0.1, port 0.
 * Storage follows the environment, so every /v1 test runs on both set-ups: SQLite and files by
 * default; DROPSHOOT_TEST_STORE=pg puts each server on a fresh PostgreSQL schema
 * (helpers/test-database.ts) and DROPSHOOT_TEST_BLOBS=s3 its blobs in a fresh bucket on a test
 * S3 server (helpers/s3.ts). vitest.config.ts runs the /v1 files both ways.
 */
import { expect } from 'vitest';
import { startServer } from '../../../src/server';
import type { ProviderAdapter } from '../../../src/core/providers/types';
import type { HttpTimeouts } from '../../../src/server/app';
import type { Logger } from '../../../src/server/logging';
import { Api, makeTempDir, removeDir } from './api';
import { testBlobsUrl } from './s3';
import { releaseTestDatabaseUrl, testDatabaseUrlForServer } from './test-database';

export type TestServer = {
  url: string;
  dataDir: string;
  storage: TestServerStorage;
  api: (key: string | null) => Api;
  close(): Promise<void>;
};

export type TestServerOptions = {
  allowPrivateUrls?: boolean;
  concurrency?: number;
  provider?: ProviderAdapter;
  storageQuotaBytes?: number;
  timeouts?: Partial<HttpTimeouts>;
  /** Blobs in a bucket; by default, one on a test S3 server when DROPSHOOT_TEST_BLOBS=s3. */
  blobsUrl?: string;
  /** Request lines and the core's messages, as `serve` writes them. */
  logger?: Logger;
};

export type TestServerStorage = {
  /** The server's PostgreSQL URL (with its own `?schema=`), or undefined on SQLite. */
  databaseUrl: string | undefined;
  /** The server's bucket URL, or undefined for files under the data folder. */
  blobsUrl: string | undefined;
};

/** Starts the programmatic server on 127.0.0.1:0 with a fresh temp data dir; `close` removes it. */
export async function startTestServer(opts: TestServerOptions = {}, tag = ''): Promise<TestServer> {
  const dataDir = makeTempDir(tag);
  let databaseUrl: string | undefined;
  try {
    const blobsUrl = opts.blobsUrl ?? (await testBlobsUrl());
    databaseUrl = await testDatabaseUrlForServer();
    const server = await startServer({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      ...opts,
      ...(blobsUrl ? { blobsUrl } : {}),
      ...(databaseUrl ? { databaseUrl } : {}),
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    return {
      url: server.url,
      dataDir,
      storage: { databaseUrl, blobsUrl },
      api: (key) => new Api(server.url, key),
      async close() {
        try {
          await server.close();
        } finally {
          releaseTestDatabaseUrl(databaseUrl);
          removeDir(dataDir);
        }
      },
    };
  } catch (err) {
    releaseTestDatabaseUrl(databaseUrl);
    removeDir(dataDir);
    throw err;
  }
}
