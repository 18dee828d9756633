/**
 * The studio's own SQLite file (never the core's tables). Same habits as the core: WAL, numbered
 * forward-only migrations recorded in user_version, a newer file refused.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { cacheStatements } from '../../infra/statement-cache';
import * as m0010 from './migrations/0010-initial';
import * as m0020 from './migrations/0020-moved-sources';
import * as m0040 from './migrations/0040-money-path';
import * as m0050 from './migrations/0050-refunded-jobs';

export type StudioDB = Database.Database;
const MIGRATIONS = [
  { version: 10, up: m0010.up },
  { version: 20, up: m0020.up },
  { version: 40, up: m0040.up },
  { version: 50, up: m0050.up },
] as const;

export function openStudioDatabase(file: string): StudioDB {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL'); // the journal must survive power loss: it guards against paying twice
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = MIGRATIONS.at(-1)!.version;
  if (current > latest) {
    db.close();
    throw new Error(`${file} was written by a newer Dropshoot (schema ${current}, this build knows ${latest})`);
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
  return cacheStatements(db);
}
