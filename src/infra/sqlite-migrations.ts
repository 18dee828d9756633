/**
 * The one migration runner for our SQLite files (the core's and the studio's): numbered,
 * forward-only steps, each in its own transaction ending with `PRAGMA user_version`. A file
 * written by a newer build is refused, never "fixed"; a file at a version this build never had
 * is refused too, instead of guessing which steps it is missing.
 */
import type Database from 'better-sqlite3';

export type Migration<DB> = { version: number; up(db: DB): void };

export class DatabaseTooNew extends Error {
  constructor(file: string, found: number, known: number) {
    super(
      `${file} was written by a newer Dropshoot (schema ${found}, this build knows ${known}); ` +
        'upgrade Dropshoot instead of opening it with this version',
    );
    this.name = 'DatabaseTooNew';
  }
}

export class UnknownSchemaVersion extends Error {
  constructor(file: string, found: number, known: readonly number[]) {
    super(
      `${file} is at schema ${found}, which this build never wrote (it knows ${known.join(', ')})`,
    );
    this.name = 'UnknownSchemaVersion';
  }
}

/** The version the last migration leaves a file at (0 for none). */
export function latestVersion(migrations: readonly Migration<never>[]): number {
  return migrations.at(-1)?.version ?? 0;
}

/** Brings `db` up to the last migration; closes it and throws when the file cannot be opened by this build. */
export function migrate<DB extends Database.Database>(
  db: DB,
  file: string,
  migrations: readonly Migration<DB>[],
): void {
  const versions = migrations.map((m) => m.version);
  if (versions.some((v, i) => i > 0 && v <= versions[i - 1]!)) {
    throw new Error(
      `migrations for ${file} must have increasing versions (got ${versions.join(', ')})`,
    );
  }
  const latest = versions.at(-1) ?? 0;
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    db.close();
    throw new DatabaseTooNew(file, current, latest);
  }
  if (current !== 0 && !versions.includes(current)) {
    db.close();
    throw new UnknownSchemaVersion(file, current, versions);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}
