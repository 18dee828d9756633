import type Database from 'better-sqlite3';

/**
 * The batch that paid for an item's job, recorded when another batch takes the paid item over
 * (queue.ts `enqueue`: a hot folder or run adopting a paid, undelivered job). Its charge keeps
 * counting in the paying batch's spend and ceiling, and in no other (review rev19 F2: moved with
 * batch_id, it counted in neither, and the paying folder's ceiling let more photos in). Null: the
 * item's own batch paid, or nothing was paid.
 */
export function up(db: Database.Database): void {
  db.exec(`ALTER TABLE items ADD COLUMN paid_batch_id TEXT;
    CREATE INDEX items_paid_batch ON items (paid_batch_id) WHERE paid_batch_id IS NOT NULL;`);
}
