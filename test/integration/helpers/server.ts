/**
 * Per-test in-process server (programmatic `startServer`): fresh temp data dir, 127.0.0.1, port 0.
 */
import { expect } from 'vitest';
import { startServer } from '../../../src/server';
import type { ProviderAdapter } from '../../../src/core/providers/types';
import type { HttpTimeouts } from '../../../src/server/app';
import { Api, makeTempDir, removeDir } from './api';
import { testBlobsUrl } from './s3';

export type TestServer = {
  url: string;
  dataDir: string;
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
};

/** Starts the programmatic server on 127.0.0.1:0 with a fresh temp data dir; `close` removes it. */
export async function startTestServer(opts: TestServerOptions = {}, tag = ''): Promise<TestServer> {
  const dataDir = makeTempDir(tag);
  try {
    const blobsUrl = opts.blobsUrl ?? (await testBlobsUrl());
    const server = await startServer({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      ...opts,
      ...(blobsUrl ? { blobsUrl } : {}),
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    return {
      url: server.url,
      dataDir,
      api: (key) => new Api(server.url, key),
      async close() {
        try {
          await server.close();
        } finally {
          removeDir(dataDir);
        }
      },
    };
  } catch (err) {
    removeDir(dataDir);
    throw err;
  }
}
