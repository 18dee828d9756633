import type { WritableDB } from '../types';

/**
 * - job_units.started_at / interruptions: an attempt is counted per unit, only when a crash cut
 *   work that had started (a unit still marked started at the next start-up); queued units and
 *   clean shutdowns never count.
 * - blobs by account: the per-account storage quota sums them.
 * - Images fetched for requests that were then refused used to be kept with a row; rows no job
 *   names are dropped here (their files go at the next orphan sweep).
 */
export function up(db: WritableDB): void {
  db.exec(`
    ALTER TABLE job_units ADD COLUMN started_at TEXT;
    ALTER TABLE job_units ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX blobs_account ON blobs(account_id, sha256) WHERE account_id IS NOT NULL;

    CREATE TEMP TABLE used_shas AS
      SELECT DISTINCT t.value AS sha256 FROM jobs, json_tree(jobs.input) AS t WHERE t.key = 'sha256';
    DELETE FROM blobs
      WHERE origin = 'fetched'
        AND sha256 NOT IN (SELECT sha256 FROM used_shas)
        AND id NOT IN (SELECT blob_id FROM job_results);
    DROP TABLE used_shas;
  `);
}
