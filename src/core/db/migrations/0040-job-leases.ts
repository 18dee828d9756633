import type { WritableDB } from '../types';

/**
 * Job leases (team mode's claim / renew / release, kept by SQLite too so both stores answer the
 * same contract): which worker holds a processing job, and until when (ISO time). The
 * one-process runner of the embedded core does not use them.
 */
export function up(db: WritableDB): void {
  db.exec(`
    ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
    ALTER TABLE jobs ADD COLUMN lease_until TEXT;
  `);
}
