import type Database from 'better-sqlite3';

/**
 * How many times the photo was sent again under a new key after a create whose answer was lost
 * (`--uncertain resubmit`, or the UI's resubmit). Each such send may be charged again: the count
 * outlives runs so a photo is resubmitted at most once, ever (review rev17 U1: it was resubmitted
 * each time the batch settled, paying again every time).
 */
export function up(db: Database.Database): void {
  db.exec(`ALTER TABLE items ADD COLUMN uncertain_resubmits INTEGER NOT NULL DEFAULT 0;`);
}
