/**
 * Team storage for tests that run the core outside helpers/server.ts: the real CLI as child
 * processes (`serve`, `admin`) or a core opened in the test. With DROPSHOOT_TEST_STORE=pg and
 * DROPSHOOT_TEST_BLOBS=s3 (the v1-on-pg-s3 project) it gives a fresh PostgreSQL schema and bucket,
 * and points CLI children at them through DROPSHOOT_DATABASE_URL / DROPSHOOT_BLOBS_URL (which they
 * inherit) until `release`; otherwise nothing is set and the core stays on SQLite + files under
 * --data.
 */
import type { CoreStorage } from './core-storage';
import { testBlobsUrl } from './s3';
import type { TestServerStorage } from './server';
import { releaseTestDatabaseUrl, testDatabaseUrlForServer } from './test-database';

const BLOBS_URL_VARIABLE = 'DROPSHOOT_BLOBS_URL';

export type TestStorage = TestServerStorage & {
  /** Whether jobs run under leases (PostgreSQL): a killed process's jobs wait for its lease. */
  team: boolean;
  /** The storage of a core on `dataDir`, for helpers/core-storage.ts. */
  of(dataDir: string): CoreStorage;
  /** CLI children go back to what they used before. */
  release(): void;
};

export async function useTestStorage(): Promise<TestStorage> {
  const blobsUrl = await testBlobsUrl();
  const databaseUrl = await testDatabaseUrlForServer();
  const blobsBefore = process.env[BLOBS_URL_VARIABLE];
  if (blobsUrl !== undefined) process.env[BLOBS_URL_VARIABLE] = blobsUrl;
  const storage = { databaseUrl, blobsUrl };
  return {
    ...storage,
    team: databaseUrl !== undefined,
    of: (dataDir) => ({ dataDir, storage }),
    release() {
      releaseTestDatabaseUrl(databaseUrl);
      if (blobsBefore === undefined) delete process.env[BLOBS_URL_VARIABLE];
      else process.env[BLOBS_URL_VARIABLE] = blobsBefore;
    },
  };
}
