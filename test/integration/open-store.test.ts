/**
 * The store chosen by configuration: `--database` / DROPSHOOT_DATABASE_URL read and checked
 * (never showing a password), SQLite under the data folder when absent, PostgreSQL (migrated, in
 * the `?schema=` given) when set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DATABASE_URL_VARIABLE,
  DatabaseUrlInvalid,
  databaseUrlFrom,
  openStore,
  storeTarget,
} from '../../src/core/store/open-store';
import { DatabaseUnavailable } from '../../src/core/store/pg/url';
import type { Store } from '../../src/core/store/types';
import { describePostgres } from '../support/postgres';

const T0 = '2026-11-23T10:00:00.000Z';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-open-store-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** The error `fn` throws (failing the test if it does not). */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

async function addAccount(store: Store, id: string): Promise<void> {
  await store.accounts.create({ id, email: `${id}@example.test`, createdAt: T0 });
}

describe('databaseUrlFrom', () => {
  const url = 'postgres://svc:s3cret-Pw@db.internal:5432/dropshoot';

  it('takes the flag over the environment, the environment when the flag is absent, nothing when neither', () => {
    const env = { [DATABASE_URL_VARIABLE]: 'postgresql://other@db2/other' };
    expect(databaseUrlFrom(url, env)).toBe(url);
    expect(databaseUrlFrom(undefined, env)).toBe('postgresql://other@db2/other');
    expect(databaseUrlFrom(undefined, {})).toBeUndefined();
    expect(databaseUrlFrom(undefined, { [DATABASE_URL_VARIABLE]: '  ' })).toBeUndefined(); // an empty variable is unset
    expect(databaseUrlFrom(` ${url} `, {})).toBe(url);
  });

  it('refuses other schemes, naming the flag or variable and never the password', () => {
    const flagError = thrown(() => databaseUrlFrom('mysql://root:hunter2-pw@db/app', {}));
    expect(flagError).toBeInstanceOf(DatabaseUrlInvalid);
    expect(flagError.message).toMatch(
      /^--database mysql:\/\/root:\*\*\*@db\/app: scheme mysql:\/\/ is not supported; give postgres:\/\//,
    );
    expect(flagError.message).toContain('leave it out for SQLite under --data');
    expect(`${flagError.message}${flagError.stack}`).not.toContain('hunter2');

    const envError = thrown(() =>
      databaseUrlFrom(undefined, { [DATABASE_URL_VARIABLE]: 'sqlite:///var/lib/core.db' }),
    );
    expect(envError.message).toMatch(
      /^DROPSHOOT_DATABASE_URL .*scheme sqlite:\/\/ is not supported/,
    );
    expect(thrown(() => databaseUrlFrom('db.internal:5432', {})).message).toMatch(
      /scheme db\.internal:\/\/ is not supported|not a URL/,
    );
    expect(thrown(() => databaseUrlFrom('just words', {})).message).toMatch(
      /^--database .*: not a URL/,
    );
    expect(thrown(() => databaseUrlFrom('', {})).message).toBe(
      '--database is empty (give a postgres:// URL, or leave it out for SQLite under --data)',
    );
  });

  it('refuses a PostgreSQL URL without a database or with a bad schema, never showing the password (raw or %-encoded)', () => {
    const noDb = thrown(() => databaseUrlFrom('postgres://svc:p%40ss-w0rd@db.internal:5432/', {}));
    expect(noDb.message).toMatch(
      /^--database postgres:\/\/svc:\*\*\*@db\.internal:5432\/: no database name/,
    );
    const badSchema = thrown(() =>
      databaseUrlFrom('postgres://svc:p%40ss-w0rd@db.internal/app?schema=Team-A', {}),
    );
    expect(badSchema.message).toMatch(/schema "Team-A" must be lower-case letters, digits and _/);
    for (const err of [noDb, badSchema]) {
      expect(err.message).not.toContain('p%40ss-w0rd');
      expect(err.message).not.toContain('p@ss-w0rd');
    }
  });

  it('storeTarget says where a store lives with the password masked and the schema apart', () => {
    expect(storeTarget({ dataDir: path.join(root, 'd') })).toEqual({
      dialect: 'sqlite',
      file: path.join(root, 'd', 'core.db'),
      label: `SQLite ${path.join(root, 'd', 'core.db')}`,
    });
    const target = storeTarget({
      databaseUrl: 'postgresql://svc:pw-123@db:6432/app?schema=team_a&application_name=x',
      dataDir: root,
    });
    expect(target).toMatchObject({
      dialect: 'postgres',
      schema: 'team_a',
      url: 'postgresql://svc:pw-123@db:6432/app?application_name=x',
    });
    expect(target.label).toBe(
      'PostgreSQL postgresql://svc:***@db:6432/app?schema=team_a&application_name=x',
    );
  });
});

describe('openStore without a database URL', () => {
  it('opens (creating and migrating) the SQLite file under the data folder, which keeps its rows across opens', async () => {
    const dataDir = path.join(root, 'fresh', 'data'); // not there yet
    let store = await openStore({ dataDir });
    expect(store.dialect).toBe('sqlite');
    await addAccount(store, 'acct_sqlite');
    await store.close();
    expect(fs.existsSync(path.join(dataDir, 'core.db'))).toBe(true);
    store = await openStore({ dataDir, databaseUrl: undefined });
    expect(await store.accounts.idByEmail('acct_sqlite@example.test')).toBe('acct_sqlite');
    await store.close();
  });
});

describePostgres('openStore with a PostgreSQL URL', (databaseUrl) => {
  const withParams = (params: Record<string, string>) => {
    const url = new URL(databaseUrl());
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.toString();
  };

  it('opens PostgreSQL migrated; ?schema= keeps each service in its own schema of one database', async () => {
    const dataDir = path.join(root, 'pg-data');
    const a = await openStore({
      databaseUrl: withParams({ schema: 'team_a' }),
      dataDir,
      applicationName: 'open-store-test',
    });
    const b = await openStore({ databaseUrl: withParams({ schema: 'team_b' }), dataDir });
    try {
      expect(a.dialect).toBe('postgres');
      await a.ping();
      await addAccount(a, 'acct_a');
      await addAccount(b, 'acct_b');
      expect(await a.accounts.idByEmail('acct_b@example.test')).toBeUndefined();
      expect(await b.accounts.idByEmail('acct_b@example.test')).toBe('acct_b');
      // The tables are where the URL said, migrated; nothing went to the SQLite side.
      const client = new pg.Client({ connectionString: databaseUrl() });
      await client.connect();
      try {
        const tables = await client.query<{ schema: string }>(
          "SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'schema_migrations' ORDER BY 1",
        );
        expect(tables.rows.map((r) => r.schema)).toEqual(['team_a', 'team_b']);
        const accounts = await client.query<{ id: string }>('SELECT id FROM team_a.accounts');
        expect(accounts.rows.map((r) => r.id)).toEqual(['acct_a']);
      } finally {
        await client.end();
      }
      expect(fs.existsSync(path.join(dataDir, 'core.db'))).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a wrong password rejects with DatabaseUnavailable that never shows it', async () => {
    const url = new URL(withParams({ schema: 'team_c' }));
    url.password = 'Wr0ng-pa55-zz';
    const failure = await openStore({ databaseUrl: url.toString(), dataDir: root }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(failure).toBeInstanceOf(DatabaseUnavailable);
    expect(`${failure?.message}${failure?.stack}`).not.toContain('Wr0ng-pa55-zz');
  });
});
