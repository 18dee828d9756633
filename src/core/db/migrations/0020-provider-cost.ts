import type { WritableDB } from '../types';

/** What the generation backend charged for a job (USD), next to the diamonds it cost the caller. */
export function up(db: WritableDB): void {
  db.exec(`
    ALTER TABLE jobs ADD COLUMN provider TEXT;
    ALTER TABLE jobs ADD COLUMN provider_cost_usd REAL;
  `);
}
