/**
 * Numbered, forward-only migrations for the PostgreSQL store, recorded in `schema_migrations`.
 * Processes that start together take a session advisory lock first, so exactly one of them
 * applies what is missing and the others find it done; each migration is one transaction
 * (PostgreSQL's DDL is transactional), so a crash mid-way leaves the previous version intact.
 * A database written by a newer Dropshoot is refused, never "fixed".
 */
import type pg from 'pg';
import { connect, type PgPool } from './pool';
import { scrubbedError } from './url';
import * as m0010 from './migrations/0010-initial';
import * as m0020 from './migrations/0020-key-changes';
import * as m0030 from './migrations/0030-key-usage-holds';
import * as m0040 from './migrations/0040-key-usage-keep';

export type PgMigration = { version: number; sql: string };

export const PG_MIGRATIONS: readonly PgMigration[] = [m0010, m0020, m0030, m0040].map(
  ({ version, sql }) => ({
    version,
    sql,
  }),
);

/** Any fixed number, the same in every process: the lock that serialises migrators. */
const MIGRATION_LOCK = 0x64726f70_73686f74n; // 'dropshot'

export class PostgresSchemaTooNew extends Error {
  override name = 'PostgresSchemaTooNew';
  constructor(database: string, found: number, known: number) {
    super(
      `${database} was migrated by a newer Dropshoot (schema ${found}, this build knows ${known}); ` +
        'upgrade Dropshoot instead of running this version against it',
    );
  }
}

/**
 * Brings the database up to the newest migration; returns the versions this call applied
 * (empty when another process had done it or nothing was missing).
 */
export async function migratePostgres(
  handle: PgPool,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): Promise<number[]> {
  const latest = migrations.at(-1)?.version ?? 0;
  const client = await connect(handle);
  let broken = false;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    try {
      if (handle.schema !== undefined)
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${handle.schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const current = await currentVersion(client);
      if (current > latest) throw new PostgresSchemaTooNew(handle.target.redacted, current, latest);
      const applied: number[] = [];
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        await applyOne(client, migration);
        applied.push(migration.version);
      }
      return applied;
    } finally {
      // Closing the connection frees the lock too, so a failed unlock loses nothing.
      await client
        .query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()])
        .catch(() => undefined);
    }
  } catch (err) {
    broken = !(err instanceof PostgresSchemaTooNew);
    if (!broken) throw err;
    throw scrubbedError(err, handle.target, 'migrating the PostgreSQL schema failed');
  } finally {
    // A connection that failed mid-way may be in any state: drop it instead of pooling it.
    client.release(broken);
  }
}

async function currentVersion(client: pg.PoolClient): Promise<number> {
  const result = await client.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM schema_migrations',
  );
  return result.rows[0]?.version ?? 0;
}

async function applyOne(client: pg.PoolClient, migration: PgMigration): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`migration ${migration.version}: ${(err as Error).message}`, { cause: err });
  }
}

/** The schema version the database is at (0 when never migrated). */
export async function postgresSchemaVersion(handle: PgPool): Promise<number> {
  const client = await connect(handle);
  try {
    const exists = await client.query(
      "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
    );
    if (!(exists.rows[0] as { present: boolean }).present) return 0;
    return await currentVersion(client);
  } catch (err) {
    throw scrubbedError(err, handle.target, 'reading the PostgreSQL schema version failed');
  } finally {
    client.release();
  }
}
