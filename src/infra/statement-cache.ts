/**
 * Node-only building block shared by the core's and the studio's SQLite files (src/infra holds
 * such helpers: no domain knowledge, nothing of ours imported).
 */
import type Database from 'better-sqlite3';

const MAX_CACHED = 512;

/**
 * Makes `db.prepare` reuse statements by SQL text. Preparing costs more than running most of
 * our queries (a poll is one indexed SELECT), and every call site passes static SQL, so a
 * small bounded cache removes that cost without touching the call sites. Nothing in the code
 * base switches a statement into pluck/raw/expand mode, which would leak between callers.
 */
export function cacheStatements<T extends Database.Database>(db: T): T {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  const cached = (sql: string): Database.Statement => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = prepare(sql);
      if (cache.size < MAX_CACHED) cache.set(sql, statement);
    }
    return statement;
  };
  db.prepare = cached as T['prepare'];
  return db;
}
