/**
 * PostgreSQL for tests. `DROPSHOOT_TEST_DATABASE_URL` names a database the test role may connect
 * to; the role must be allowed to create databases (`.ci/postgres` sets this up). Each test file
 * gets a database of its own, created in `beforeAll` and dropped (with its connections) in
 * `afterAll`, so files run in parallel without seeing each other's rows.
 *
 * Unset: the suite is skipped with a message, unless CI is set, where it fails instead (CI must
 * never skip the PostgreSQL tests silently).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';

export const TEST_DATABASE_URL_VARIABLE = 'DROPSHOOT_TEST_DATABASE_URL';

const inCi = (): boolean => {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
};

/** The test database URL, or undefined when PostgreSQL tests are not configured here. */
export function testDatabaseUrl(): string | undefined {
  const url = process.env[TEST_DATABASE_URL_VARIABLE];
  return url === undefined || url.trim() === '' ? undefined : url.trim();
}

/** The URL with its password replaced, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable database URL)';
  }
}

export type TestDatabase = {
  /** URL of the fresh database (same credentials and server as the configured one). */
  url: string;
  name: string;
  drop(): Promise<void>;
};

/** Creates an empty database on the configured server; `drop()` removes it and its connections. */
export async function createTestDatabase(baseUrl: string, label = 'test'): Promise<TestDatabase> {
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 24);
  const name = `dropshoot_t_${slug}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdmin(baseUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => dropDatabase(baseUrl, name),
  };
}

/** SQLSTATEs of a drop refused for a moment: a backend it may not signal, or one still leaving. */
const DROP_REFUSED_FOR_NOW = new Set(['42501', '55006']);

/**
 * Drops `name` with its connections. FORCE signals every backend on the database, and an
 * autovacuum worker that happens to be on it belongs to no role the test role is a member of
 * (CI at 431fc9d: "must be a member of the role whose process is being terminated"); such a
 * worker leaves within moments, so the drop is asked again for a few seconds before it fails.
 */
async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await withAdmin(baseUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      );
      return;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= 40 || typeof code !== 'string' || !DROP_REFUSED_FOR_NOW.has(code)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function withAdmin<T>(baseUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: baseUrl });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(
      `cannot connect to ${redactedUrl(baseUrl)} (${TEST_DATABASE_URL_VARIABLE}): ${(err as Error).message}`,
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * `describe` for tests that need PostgreSQL: `body` receives a getter for this file's fresh
 * database URL (valid inside tests and hooks). Skipped with a reason when PostgreSQL is not
 * configured and CI is not set; a failing test when CI is set and it is not configured.
 */
export function describePostgres(name: string, body: (databaseUrl: () => string) => void): void {
  const baseUrl = testDatabaseUrl();
  if (baseUrl === undefined) {
    const reason = `${TEST_DATABASE_URL_VARIABLE} is not set (run \`source .ci/postgres\` to start PostgreSQL and set it)`;
    if (inCi()) {
      describe(name, () => {
        it('has a PostgreSQL database to run against', () => {
          throw new Error(
            `CI is set but ${reason}: the PostgreSQL tests must not be skipped in CI`,
          );
        });
      });
    } else {
      console.warn(`[postgres] skipping "${name}": ${reason}`);
      describe.skip(`${name} (skipped: ${reason})`, () => body(() => '')); // listed, not run
    }
    return;
  }
  describe(name, () => {
    let database: TestDatabase | undefined;
    beforeAll(async () => {
      database = await createTestDatabase(baseUrl, name);
    });
    afterAll(async () => {
      await database?.drop();
    });
    body(() => {
      if (!database)
        throw new Error(
          'the test database is made in beforeAll; read its URL inside a test or hook',
        );
      return database.url;
    });
  });
}
