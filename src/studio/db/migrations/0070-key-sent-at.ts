import type Database from 'better-sqlite3';

/**
 * When the current submit key first went out (`submitted_at` is overwritten by every resend). A
 * lost create's key is compared with older answered keys by it: if a key sent before it is still
 * held by the service, this one would be too had its first attempt been processed. NULL (rows
 * from before): unknown, so never resent on that ground.
 */
export function up(db: Database.Database): void {
  db.exec(`ALTER TABLE items ADD COLUMN key_sent_at TEXT;`);
}
