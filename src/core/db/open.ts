/**
 * Opens the core's SQLite file (WAL) and runs numbered, forward-only migrations. A database
 * written by a newer Dropshoot is refused, never "fixed".
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { cacheStatements } from '../../infra/statement-cache';
import { latestVersion, migrate, type Migration } from '../../infra/sqlite-migrations';
import type { WritableDB } from './types';
import * as m0010 from './migrations/0010-initial';
import * as m0020 from './migrations/0020-provider-cost';
import * as m0030 from './migrations/0030-interruptions-and-storage';
import * as m0040 from './migrations/0040-job-leases';

const MIGRATIONS: readonly Migration<WritableDB>[] = [
  { version: 10, up: m0010.up },
  { version: 20, up: m0020.up },
  { version: 30, up: m0030.up },
  { version: 40, up: m0040.up },
];
/** The schema version a core file is at once opened by this build. */
export const CORE_SCHEMA_VERSION = latestVersion(MIGRATIONS);

export { DatabaseTooNew } from '../../infra/sqlite-migrations';

export function openDatabase(
  file: string,
  migrations: readonly Migration<WritableDB>[] = MIGRATIONS,
): WritableDB {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file) as WritableDB;
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Admin commands and a running server share the file; wait for the writer instead of failing.
  db.pragma('busy_timeout = 10000');
  migrate(db, file, migrations);
  return cacheStatements(db);
}
