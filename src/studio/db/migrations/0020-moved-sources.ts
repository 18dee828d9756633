import type Database from 'better-sqlite3';

/**
 * Where a hot folder moved an item's source (done/ or failed/), so retry can bring it back; and
 * the shots of a pack or catalog job that failed, so they can be retried alone.
 */
export function up(db: Database.Database): void {
  db.exec(`
    ALTER TABLE items ADD COLUMN moved_to TEXT;
    ALTER TABLE items ADD COLUMN failed_shots TEXT;
  `);
}
