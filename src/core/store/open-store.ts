/**
 * Which store a process uses, chosen by configuration: `--database URL` (or
 * `DROPSHOOT_DATABASE_URL`) with a `postgres://` / `postgresql://` URL opens PostgreSQL (team
 * mode, migrated on open); absent, the SQLite file under the data folder, as always. Every
 * message that could carry the URL shows it with its password masked.
 */
import path from 'node:path';
import { openPostgresStore } from './pg/index';
import { DatabaseUrlInvalid, parsePostgresUrl, redactUrl, scrubSecrets } from './pg/url';
import { openSqliteStore } from './sqlite/index';
import type { Store } from './types';

export { DatabaseUrlInvalid } from './pg/url';

export const DATABASE_URL_VARIABLE = 'DROPSHOOT_DATABASE_URL';
/** The core's SQLite file inside the data folder. */
export const SQLITE_FILE_NAME = 'core.db';

const POSTGRES_SCHEMES = new Set(['postgres:', 'postgresql:']);

export type OpenStoreOptions = {
  /** A postgres:// URL (see `databaseUrlFrom`); absent: SQLite at `<dataDir>/core.db`. */
  databaseUrl?: string | undefined;
  /** The data folder: the SQLite file lives here when no database URL is given. */
  dataDir: string;
  /** PostgreSQL only: most connections this process opens (default 10). */
  maxConnections?: number;
  /** PostgreSQL only: the name shown in pg_stat_activity (default "dropshoot"). */
  applicationName?: string;
  /** PostgreSQL only: run the migrations on open (default true; they run once under an advisory lock). */
  migrate?: boolean;
  /** PostgreSQL only: a direct URL to LISTEN on when `databaseUrl` goes through PgBouncer (`databaseListenUrlFrom`). */
  listenUrl?: string | undefined;
  /** PostgreSQL only: where the store reports falling back from LISTEN to polling. */
  log?: (message: string) => void;
};

/** Where a store lives, safe to log: `SQLite /data/core.db` or `PostgreSQL postgres://user:***@host/db`. */
export type StoreTarget =
  | { dialect: 'sqlite'; file: string; label: string }
  | { dialect: 'postgres'; url: string; schema: string | undefined; label: string };

/**
 * The database URL from the `--database` flag, else the environment variable; undefined when
 * neither is set (an empty variable counts as unset, an empty flag does not). Throws
 * DatabaseUrlInvalid, naming where the URL came from and never its password, for a URL that is
 * not PostgreSQL's or is malformed.
 */
export function databaseUrlFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return postgresUrlFrom(flag, '--database', env, DATABASE_URL_VARIABLE);
}

/** A PostgreSQL URL from `flagName`'s value, else `variable` (see `databaseUrlFrom`). */
function postgresUrlFrom(
  flag: string | undefined,
  flagName: string,
  env: NodeJS.ProcessEnv,
  variable: string,
): string | undefined {
  const fromEnv = env[variable];
  const [value, source] =
    flag !== undefined
      ? [flag, flagName]
      : fromEnv !== undefined && fromEnv.trim() !== ''
        ? [fromEnv, variable]
        : [undefined, ''];
  if (value === undefined) return undefined;
  if (value.trim() === '')
    throw new DatabaseUrlInvalid(
      `${source} is empty (give a postgres:// URL, or leave it out for SQLite under --data)`,
    );
  storeTarget({ databaseUrl: value, dataDir: '.' }, source);
  return value.trim();
}

/**
 * Where `openStore` would open, without connecting: validates the URL (scheme, host, database
 * name, `?schema=`). `source` names the flag or variable in messages.
 */
export function storeTarget(
  options: Pick<OpenStoreOptions, 'databaseUrl' | 'dataDir'>,
  source = 'the database URL',
): StoreTarget {
  if (options.databaseUrl === undefined) {
    const file = path.join(path.resolve(options.dataDir), SQLITE_FILE_NAME);
    return { dialect: 'sqlite', file, label: `SQLite ${file}` };
  }
  const text = options.databaseUrl.trim();
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(text)?.[1]?.toLowerCase();
  const refuse = (reason: string): never => {
    const secrets = secretsIn(text);
    throw new DatabaseUrlInvalid(scrubSecrets(`${source} ${redactUrl(text)}: ${reason}`, secrets));
  };
  if (scheme === undefined || !POSTGRES_SCHEMES.has(scheme)) {
    refuse(
      `${scheme ? `scheme ${scheme}// is not supported` : 'not a URL'}; give postgres://user:password@host:5432/database ` +
        '(or postgresql://), or leave it out for SQLite under --data',
    );
  }
  const { url, schema } = withoutSchemaParam(text, refuse);
  try {
    parsePostgresUrl(url);
  } catch (err) {
    // parsePostgresUrl's message is already free of the password; say where the URL came from.
    refuse((err as Error).message.replace(/^database URL \S+ is invalid: /, ''));
  }
  return { dialect: 'postgres', url, schema, label: `PostgreSQL ${redactUrl(text)}` };
}

/**
 * Opens the configured store: PostgreSQL (migrated unless `migrate: false`; `?schema=NAME` in the
 * URL keeps this service's tables in that schema) or SQLite under the data folder (created and
 * migrated as needed). Connection failures reject with a DatabaseUnavailable free of credentials.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const target = storeTarget(options);
  if (target.dialect === 'sqlite') return openSqliteStore(target.file);
  return openPostgresStore(target.url, {
    ...(target.schema !== undefined ? { schema: target.schema } : {}),
    ...(options.maxConnections !== undefined ? { max: options.maxConnections } : {}),
    ...(options.applicationName !== undefined ? { applicationName: options.applicationName } : {}),
    ...(options.migrate !== undefined ? { migrate: options.migrate } : {}),
    ...(options.listenUrl !== undefined ? { listenUrl: listenUrlOf(options.listenUrl) } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}

/** The listen URL as the driver takes it (`?schema=` is the pool's business, dropped here). */
function listenUrlOf(text: string): string {
  const target = storeTarget({ databaseUrl: text, dataDir: '.' }, 'the database listen URL');
  if (target.dialect !== 'postgres')
    throw new DatabaseUrlInvalid('the database listen URL is not PostgreSQL');
  return target.url;
}

export const DATABASE_LISTEN_URL_VARIABLE = 'DROPSHOOT_DATABASE_LISTEN_URL';

/**
 * The direct URL to LISTEN on, from `--database-listen-url` else DROPSHOOT_DATABASE_LISTEN_URL
 * (an empty variable counts as unset); validated like the database URL, never echoed whole.
 */
export function databaseListenUrlFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return postgresUrlFrom(flag, '--database-listen-url', env, DATABASE_LISTEN_URL_VARIABLE);
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** `?schema=` is ours, not the driver's: taken out of the URL and checked. */
function withoutSchemaParam(
  text: string,
  refuse: (reason: string) => never,
): { url: string; schema: string | undefined } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('not a URL (expected postgres://user:password@host:5432/database)');
  }
  const schema = url.searchParams.get('schema');
  if (schema === null) return { url: text, schema: undefined };
  if (!SCHEMA_NAME.test(schema))
    refuse(
      `schema ${JSON.stringify(schema)} must be lower-case letters, digits and _ (at most 63)`,
    );
  url.searchParams.delete('schema');
  return { url: url.toString(), schema };
}

/** The password as written and decoded, for scrubbing messages about a URL that may not parse. */
function secretsIn(text: string): string[] {
  const found = new Set<string>();
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/[^/@:]*:([^/@]*)@/i.exec(text)?.[1];
  if (userinfo) {
    found.add(userinfo);
    try {
      found.add(decodeURIComponent(userinfo));
    } catch {
      // kept as written
    }
  }
  const param = /[?&]password=([^&]*)/i.exec(text)?.[1];
  if (param) found.add(param);
  return [...found].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}
