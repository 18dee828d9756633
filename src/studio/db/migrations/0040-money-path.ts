import type Database from 'better-sqlite3';

/**
 * The money path: what the service last said about a job (only its own `failed` means refunded),
 * when the job is next due for a poll (a waiting job holds no slot), the diamonds reserved for an
 * item before it is charged, whether its charge is confirmed by the balance, how often a refused
 * submission (500, refunded) was sent again; and the observed job times per tool (a bounded
 * window for a robust estimate).
 */
export function up(db: Database.Database): void {
  db.exec(`
    ALTER TABLE items ADD COLUMN job_status TEXT;
    ALTER TABLE items ADD COLUMN poll_at TEXT;
    ALTER TABLE items ADD COLUMN seen_running_at TEXT;
    ALTER TABLE items ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE items ADD COLUMN price_sure INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE items ADD COLUMN resubmits INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX items_job ON items(sha256, recipe_hash, job_id);

    CREATE TABLE job_times (
      tool_id TEXT NOT NULL,
      ms INTEGER NOT NULL,
      at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX job_times_tool ON job_times(tool_id, at);
  `);
}
