import type Database from 'better-sqlite3';

/** Where a hot folder moved an item's source (done/ or failed/), so retry can bring it back. */
export function up(db: Database.Database): void {
  db.exec('ALTER TABLE items ADD COLUMN moved_to TEXT;');
}
