/**
 * The PostgreSQL store's schema: migrations applied once even when several processes start
 * together, a newer database refused, and connection failures reported without credentials.
 */
import { expect, it } from 'vitest';
import { openPgPool, type PgPool } from '../../src/core/store/pg/pool';
import {
  migratePostgres,
  postgresSchemaVersion,
  PG_MIGRATIONS,
  PostgresSchemaTooNew,
} from '../../src/core/store/pg/migrate';
import {
  DatabaseUrlInvalid,
  DatabaseUnavailable,
  parsePostgresUrl,
} from '../../src/core/store/pg/url';
import { createTestDatabase, describePostgres, testDatabaseUrl } from '../support/postgres';

const latest = PG_MIGRATIONS.at(-1)!.version;

async function withPools<T>(
  url: string,
  n: number,
  fn: (pools: PgPool[]) => Promise<T>,
): Promise<T> {
  const pools = Array.from({ length: n }, (_, i) =>
    openPgPool(url, { max: 2, applicationName: `migrator-${i}` }),
  );
  try {
    return await fn(pools);
  } finally {
    await Promise.all(pools.map((p) => p.pool.end()));
  }
}

describePostgres('PostgreSQL migrations', (databaseUrl) => {
  it('three migrators starting together on an empty database apply the schema once, without error', async () => {
    const results = await withPools(databaseUrl(), 3, (pools) =>
      Promise.all(pools.map((p) => migratePostgres(p))),
    );
    // Exactly one of them applied every migration; the others found the work done.
    const appliers = results.filter((applied) => applied.length > 0);
    expect(appliers).toEqual([PG_MIGRATIONS.map((m) => m.version)]);
    expect(results.filter((applied) => applied.length === 0)).toHaveLength(2);

    await withPools(databaseUrl(), 1, async ([handle]) => {
      const rows = await handle!.pool.query<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      expect(rows.rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
      expect(await postgresSchemaVersion(handle!)).toBe(latest);
      const tables = await handle!.pool.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
      );
      expect(tables.rows.map((r) => r.name)).toEqual([
        'accounts',
        'api_keys',
        'blobs',
        'idempotency',
        'job_results',
        'job_units',
        'jobs',
        'key_changes',
        'key_usage',
        'ledger',
        'schema_migrations',
        'template_sets',
      ]);
      // A later start finds nothing to do.
      expect(await migratePostgres(handle!)).toEqual([]);
    });
  });

  it('keeps the ledger append-only and the balance never negative', async () => {
    await withPools(databaseUrl(), 1, async ([handle]) => {
      const { pool } = handle!;
      await migratePostgres(handle!);
      await pool.query(
        "INSERT INTO accounts (id, email, created_at) VALUES ('acct_ao', 'AO@example.com', now())",
      );
      await expect(
        pool.query(
          "INSERT INTO accounts (id, email, created_at) VALUES ('acct_ao2', 'ao@EXAMPLE.com', now())",
        ),
      ).rejects.toThrow(/accounts_email/);
      await pool.query(
        "INSERT INTO ledger (account_id, kind, amount, balance_after, created_at) VALUES ('acct_ao', 'grant', 5, 5, now())",
      );
      await expect(
        pool.query("UPDATE ledger SET amount = 6 WHERE account_id = 'acct_ao'"),
      ).rejects.toThrow(/append-only/);
      await expect(pool.query("DELETE FROM ledger WHERE account_id = 'acct_ao'")).rejects.toThrow(
        /append-only/,
      );
      await expect(
        pool.query("UPDATE accounts SET balance = -1 WHERE id = 'acct_ao'"),
      ).rejects.toThrow(/balance_check/);
    });
  });

  it('returns bigint as an exact number, refuses one past 2^53, and timestamps as ISO UTC strings', async () => {
    await withPools(databaseUrl(), 1, async ([handle]) => {
      const { pool } = handle!;
      const row = await pool.query<{ big: number; at: string }>(
        "SELECT 9007199254740991::bigint AS big, '2026-03-01 23:30:00.123+05'::timestamptz AS at",
      );
      expect(row.rows[0]).toEqual({ big: 9007199254740991, at: '2026-03-01T18:30:00.123Z' });
      await expect(pool.query('SELECT 9007199254740993::bigint AS big')).rejects.toThrow(
        /beyond JavaScript's exact integers/,
      );
    });
  });

  it('refuses a database migrated by a newer Dropshoot', async () => {
    const db = await createTestDatabase(testDatabaseUrl()!, 'too-new');
    try {
      await withPools(db.url, 1, async ([handle]) => {
        await migratePostgres(handle!);
        await handle!.pool.query('INSERT INTO schema_migrations (version) VALUES ($1)', [
          latest + 1000,
        ]);
        await expect(migratePostgres(handle!)).rejects.toBeInstanceOf(PostgresSchemaTooNew);
        await expect(migratePostgres(handle!)).rejects.toThrow(
          `schema ${latest + 1000}, this build knows ${latest}`,
        );
      });
    } finally {
      await db.drop();
    }
  });

  it('never shows the password: wrong password, unknown database, malformed URL', async () => {
    const base = new URL(testDatabaseUrl()!);
    const secret = 'S3cr3t-p%40ss-never-shown';
    const decoded = 'S3cr3t-p@ss-never-shown';

    const wrongPassword = new URL(base);
    wrongPassword.password = secret;
    const unknownDb = new URL(base);
    unknownDb.pathname = '/dropshoot_no_such_database';
    unknownDb.password = secret;
    for (const url of [wrongPassword, unknownDb]) {
      const error = await withPools(url.toString(), 1, ([handle]) =>
        migratePostgres(handle!).then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
      expect(error).toBeInstanceOf(DatabaseUnavailable);
      const text = `${(error as Error).message}\n${(error as Error).stack ?? ''}`;
      expect(text).not.toContain(secret);
      expect(text).not.toContain(decoded);
      expect(text).toContain('***');
    }

    for (const bad of [
      `mysql://u:${secret}@localhost/db`,
      `postgres://u:${secret}@localhost`,
      `postgres://u:${secret}@[bad`,
    ]) {
      let caught: unknown;
      try {
        parsePostgresUrl(bad);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(DatabaseUrlInvalid);
      expect((caught as Error).message).not.toContain(secret);
      expect((caught as Error).message).not.toContain(decoded);
    }
  });
});
