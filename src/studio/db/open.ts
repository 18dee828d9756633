/**
 * The studio's own SQLite file (never the core's tables). Same habits as the core: WAL, and the
 * same migration runner (numbered, forward-only, recorded in user_version, a newer file refused).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { migrate, type Migration } from '../../infra/sqlite-migrations';
import { cacheStatements } from '../../infra/statement-cache';
import * as m0010 from './migrations/0010-initial';
import * as m0020 from './migrations/0020-moved-sources';
import * as m0040 from './migrations/0040-money-path';
import * as m0050 from './migrations/0050-refunded-jobs';
import * as m0060 from './migrations/0060-item-kinds';
import * as m0070 from './migrations/0070-key-sent-at';
import * as m0080 from './migrations/0080-results-listed-at';
import * as m0090 from './migrations/0090-listed-urls';
import * as m0100 from './migrations/0100-uncertain-resubmits';
import * as m0110 from './migrations/0110-paid-batch';

export type StudioDB = Database.Database;
const MIGRATIONS: readonly Migration<StudioDB>[] = [
  { version: 10, up: m0010.up },
  { version: 20, up: m0020.up },
  { version: 40, up: m0040.up },
  { version: 50, up: m0050.up },
  { version: 60, up: m0060.up },
  { version: 70, up: m0070.up },
  { version: 80, up: m0080.up },
  { version: 90, up: m0090.up },
  { version: 100, up: m0100.up },
  { version: 110, up: m0110.up },
];

export function openStudioDatabase(file: string): StudioDB {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL'); // the journal must survive power loss: it guards against paying twice
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  migrate(db, file, MIGRATIONS);
  return cacheStatements(db);
}
