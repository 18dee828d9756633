/**
 * The one migration runner (src/infra/sqlite-migrations.ts) on real SQLite files, and both
 * databases that use it (the core's and the studio's) refusing files they cannot know.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CORE_SCHEMA_VERSION, openDatabase } from '../../src/core/db/open';
import {
  DatabaseTooNew,
  migrate,
  UnknownSchemaVersion,
  type Migration,
} from '../../src/infra/sqlite-migrations';
import { openStudioDatabase } from '../../src/studio/db/open';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempFile(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-migrations-'));
  dirs.push(dir);
  return path.join(dir, name);
}
const versionOf = (file: string): number => {
  const db = new Database(file);
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
};
const setVersion = (file: string, version: number): void => {
  const db = new Database(file);
  db.pragma(`user_version = ${version}`);
  db.close();
};

const steps: Migration<Database.Database>[] = [
  { version: 10, up: (db) => db.exec('CREATE TABLE a (x INTEGER) STRICT') },
  { version: 20, up: (db) => db.exec('CREATE TABLE b (y INTEGER) STRICT') },
];

describe('migration runner', () => {
  it('runs only the steps newer than the file and records the last one', () => {
    const file = tempFile('x.db');
    const db = new Database(file);
    migrate(db, file, steps.slice(0, 1));
    expect(db.pragma('user_version', { simple: true })).toBe(10);
    migrate(db, file, steps); // step 10 again would fail: table a exists
    expect(db.pragma('user_version', { simple: true })).toBe(20);
    db.close();
  });

  it('rolls a failing step back whole and keeps the version before it', () => {
    const file = tempFile('x.db');
    const db = new Database(file);
    const broken: Migration<Database.Database> = {
      version: 30,
      up: (d) => {
        d.exec('CREATE TABLE c (z INTEGER) STRICT');
        throw new Error('step 30 broke');
      },
    };
    expect(() => migrate(db, file, [...steps, broken])).toThrow('step 30 broke');
    expect(db.pragma('user_version', { simple: true })).toBe(20);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'c'").get()).toEqual({
      n: 0,
    });
    db.close();
  });

  it('refuses steps that are not in increasing order', () => {
    const file = tempFile('x.db');
    const db = new Database(file);
    expect(() => migrate(db, file, [steps[1]!, steps[0]!])).toThrow(/increasing versions/);
    db.close();
  });
});

describe.each([
  { name: 'core', file: 'core.db', open: (f: string) => openDatabase(f) },
  { name: 'studio', file: 'studio.db', open: (f: string) => openStudioDatabase(f) },
])('the $name database', ({ file, open }) => {
  it('refuses a file written by a newer build and leaves it as it was', () => {
    const target = tempFile(file);
    open(target).close();
    setVersion(target, 9999);
    expect(() => open(target)).toThrow(DatabaseTooNew);
    expect(versionOf(target)).toBe(9999);
  });

  it('refuses a file at a version this build never wrote', () => {
    const target = tempFile(file);
    open(target).close();
    setVersion(target, 15);
    expect(() => open(target)).toThrow(UnknownSchemaVersion);
    expect(versionOf(target)).toBe(15);
  });
});

it('a new core file ends at the last core migration', () => {
  const target = tempFile('core.db');
  openDatabase(target).close();
  expect(versionOf(target)).toBe(CORE_SCHEMA_VERSION);
  expect(CORE_SCHEMA_VERSION).toBeGreaterThanOrEqual(30);
});
