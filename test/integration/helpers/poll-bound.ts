/**
 * A bound on the requests a batch may take that holds on any machine, however loaded: per
 * collected job, upload + create + the most polls the poller's own schedule can make for the time
 * the job actually took (submission to collection), plus a few catalog and balance reads. It
 * catches runaway polling; the tight figures (requests per photo) are `npm run bench -- requests`'s.
 */
import type { StudioDB } from '../../../src/studio/db/open';
import { maxPollsFor } from '../../../src/studio/poller';

export function requestBound(
  db: StudioDB,
  batchId: string | null,
  extraReads = 4,
): { bound: number; jobs: number } {
  const rows = db
    .prepare(
      `SELECT i.submitted_at AS submittedAt, MIN(r.created_at) AS collectedAt FROM items i JOIN results r ON r.item_id = i.id
       WHERE i.submitted_at IS NOT NULL ${batchId ? 'AND i.batch_id = ?' : ''} GROUP BY i.id`,
    )
    .all(...(batchId ? [batchId] : [])) as { submittedAt: string; collectedAt: string }[];
  const bound = rows.reduce(
    (sum, r) => sum + 2 + maxPollsFor(Date.parse(r.collectedAt) - Date.parse(r.submittedAt)),
    extraReads,
  );
  return { bound, jobs: rows.length };
}
