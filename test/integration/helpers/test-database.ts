/**
 * PostgreSQL for the /v1 test harness: with DROPSHOOT_TEST_STORE=pg, `startTestServer` puts each
 * server on a schema of its own in one fresh database per test file (created on first use,
 * dropped with its connections when the file ends), so servers of one file share nothing (jobs
 * included: a server never claims another's). The admin CLI the tests spawn reaches a server's
 * schema through DROPSHOOT_DATABASE_URL, which points at the most recently started server still
 * open (tests run the CLI against the server they just started; closing it points the variable
 * back at the one before).
 */
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from '../../support/postgres';

export const TEST_STORE_VARIABLE = 'DROPSHOOT_TEST_STORE';
const DATABASE_URL_VARIABLE = 'DROPSHOOT_DATABASE_URL';

let database: Promise<TestDatabase> | undefined;
/** Servers' database URLs, oldest first: the last one is what the CLI is pointed at. */
const open: string[] = [];
const before = process.env[DATABASE_URL_VARIABLE];

afterAll(async () => {
  const running = database;
  database = undefined;
  if (running) await (await running).drop();
});

/** Whether the harness puts servers on PostgreSQL (DROPSHOOT_TEST_STORE=pg). */
export function testStoreIsPostgres(): boolean {
  const value = process.env[TEST_STORE_VARIABLE];
  if (value === undefined || value === '' || value === 'sqlite') return false;
  if (value === 'pg') return true;
  throw new Error(`${TEST_STORE_VARIABLE} must be pg or sqlite (got ${JSON.stringify(value)})`);
}

/**
 * With DROPSHOOT_TEST_STORE=pg: a fresh schema's URL for one server, which the CLI now reaches
 * until `release` is called with it; otherwise undefined (SQLite under the data folder).
 */
export async function testDatabaseUrlForServer(): Promise<string | undefined> {
  if (!testStoreIsPostgres()) return undefined;
  const base = testDatabaseUrl();
  if (base === undefined)
    throw new Error(
      `${TEST_STORE_VARIABLE}=pg needs DROPSHOOT_TEST_DATABASE_URL (run \`source .ci/postgres\`)`,
    );
  database ??= createTestDatabase(base, 'v1');
  const url = new URL((await database).url);
  url.searchParams.set('schema', `srv_${randomBytes(5).toString('hex')}`);
  const serverUrl = url.toString();
  open.push(serverUrl);
  process.env[DATABASE_URL_VARIABLE] = serverUrl;
  return serverUrl;
}

/** The server on `url` has closed: the CLI goes back to the newest one still open. */
export function releaseTestDatabaseUrl(url: string | undefined): void {
  if (url === undefined) return;
  const at = open.lastIndexOf(url);
  if (at >= 0) open.splice(at, 1);
  const current = open.at(-1) ?? before;
  if (current === undefined) delete process.env[DATABASE_URL_VARIABLE];
  else process.env[DATABASE_URL_VARIABLE] = current;
}
