/**
 * Opens the core's SQLite file (WAL) and runs numbered, forward-only migrations. A database
 * written by a newer Dropshoot is refused, never "fixed".
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { cacheStatements } from '../../infra/statement-cache';
import type { WritableDB } from './types';
import * as m0010 from './migrations/0010-initial';
import * as m0020 from './migrations/0020-provider-cost';
import * as m0030 from './migrations/0030-interruptions-and-storage';

type Migration = { version: number; up(db: WritableDB): void };
const MIGRATIONS: readonly Migration[] = [
  { version: 10, up: m0010.up },
  { version: 20, up: m0020.up },
  { version: 30, up: m0030.up },
];

export class DatabaseTooNew extends Error {
  constructor(file: string, found: number, known: number) {
    super(
      `${file} was written by a newer Dropshoot (schema ${found}, this build knows ${known}); ` +
        'upgrade Dropshoot instead of opening it with this version',
    );
    this.name = 'DatabaseTooNew';
  }
}

export function openDatabase(file: string, migrations: readonly Migration[] = MIGRATIONS): WritableDB {
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

function migrate(db: WritableDB, file: string, migrations: readonly Migration[]): void {
  const latest = migrations.at(-1)?.version ?? 0;
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    db.close();
    throw new DatabaseTooNew(file, current, latest);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}
