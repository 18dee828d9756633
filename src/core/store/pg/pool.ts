/**
 * A pg connection pool for the core's PostgreSQL store. Values come back as the core's SQLite
 * store gives them: `bigint` as a JS number (refused when past 2^53, never rounded), `timestamptz`
 * as an ISO-8601 UTC string. The session runs in UTC.
 */
import pg from 'pg';
import { parsePostgresUrl, scrubbedError, type PostgresTarget } from './url';

export type PgPoolOptions = {
  /** Most connections this process opens (default 10). */
  max?: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  /** How long a query waits for a free connection or the server's answer to connect (ms). */
  connectTimeoutMs?: number;
  /**
   * A schema of its own instead of `public` (created by the migrations), so several stores can
   * share one database: tests, or services kept apart on one server. Lower-case letters, digits, _.
   */
  schema?: string;
};

export type PgPool = { pool: pg.Pool; target: PostgresTarget; schema: string | undefined };

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text');

/** int8 -> number, refusing what a double cannot hold exactly (diamonds, byte sizes, ids). */
export function parseSafeBigint(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(
      `PostgreSQL bigint ${text} is beyond JavaScript's exact integers (2^53 - 1)`,
    );
  }
  return value;
}

function typeParsers(): pg.CustomTypesConfig {
  const overrides = new pg.TypeOverrides();
  overrides.setTypeParser(pg.types.builtins.INT8, parseSafeBigint);
  overrides.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (text: string) => {
    const date = parseTimestamptz(text) as Date;
    return date.toISOString();
  });
  return overrides;
}

/** Opens a pool for `url` (nothing connects until the first query). Throws DatabaseUrlInvalid. */
export function openPgPool(url: string, options: PgPoolOptions = {}): PgPool {
  const target = parsePostgresUrl(url);
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new RangeError(
      `schema name ${JSON.stringify(options.schema)} must be lower-case letters, digits and _`,
    );
  }
  const searchPath = options.schema === undefined ? '' : ` -c search_path=${options.schema}`;
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'dropshoot',
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    types: typeParsers(),
    options: `-c TimeZone=UTC${searchPath}`,
  });
  // An idle connection the server dropped must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return { pool, target, schema: options.schema };
}

/** Checks out a connection, turning a connect failure into a scrubbed DatabaseUnavailable. */
export async function connect(handle: PgPool): Promise<pg.PoolClient> {
  try {
    return await handle.pool.connect();
  } catch (err) {
    throw scrubbedError(err, handle.target, 'cannot connect to PostgreSQL');
  }
}
