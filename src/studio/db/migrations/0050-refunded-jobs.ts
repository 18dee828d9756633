import type Database from 'better-sqlite3';

/**
 * Items failed before job statuses were kept: a job the service itself failed was recorded with
 * its diamonds set back to 0 (refunded), so those are marked `failed` at the service (a re-run
 * may submit the photo again); a failed item that still counts diamonds was paid and is collected.
 */
export function up(db: Database.Database): void {
  db.exec(`
    UPDATE items SET job_status = 'failed'
    WHERE state = 'failed' AND job_id IS NOT NULL AND job_status IS NULL AND diamonds = 0;
  `);
}
