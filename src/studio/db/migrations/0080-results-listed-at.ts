import type Database from 'better-sqlite3';

/**
 * When the service first listed an item's result URLs (its job seen done). A result file that
 * answers 404 or 403 soon after is most likely not readable yet (an object store or CDN catching
 * up), not gone: it is asked again over a window from this time before being taken for a dead
 * URL. NULL (rows from before): unknown, so no such window.
 */
export function up(db: Database.Database): void {
  db.exec(`ALTER TABLE items ADD COLUMN results_listed_at TEXT;`);
}
