/**
 * A poll's answer that names another of our jobs and not the one polled (a cache or replica
 * keyed wrongly: review rev25 D4, each photo exported another photo's result) is a failed poll,
 * asked again, never read as this job's. An id none of our photos holds is this job under a name
 * of the service's own (a catalog job's generation behind its mediaItemId), read as it is.
 */
import { ApiError } from '../client';
import type { GenerationBody } from '../shared/api';
import type { StudioDB } from './db/open';

export function refuseAnotherJobsAnswer(
  db: StudioDB,
  job: Pick<GenerationBody, 'answeredAs'>,
  jobId: string,
): void {
  const named = (job.answeredAs ?? []).map((id) => id.toLowerCase());
  if (named.length === 0) return;
  const other = db
    .prepare(
      `SELECT name, job_id AS jobId FROM items
         WHERE lower(job_id) IN (${named.map(() => '?').join(',')}) AND lower(job_id) != lower(?)
         LIMIT 1`,
    )
    .get(...named, jobId) as { name: string; jobId: string } | undefined;
  if (other)
    throw new ApiError(
      502,
      `the service answered the poll of job ${jobId} with another job's body (${other.jobId}, ${other.name}'s): not read as this job's, asking again`,
    );
}
