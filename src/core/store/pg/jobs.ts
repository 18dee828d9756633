/**
 * Jobs, units and results, with leases for distributed workers. Lease times are the database's
 * clock (`clock_timestamp()`), so processes on machines whose clocks disagree still agree on
 * who holds a job. A worker's writes name it (`leaseOwner`) and land only while it holds the
 * job's row: the check takes a share lock, so a claim by another worker cannot slip between
 * the check and the write.
 */
import { JOB_INSERT_COLUMNS, newJobParams } from '../job-row';
import type {
  JobRepository,
  JobRow,
  JobWatch,
  NewJob,
  ResultRow,
  UnitRef,
  UnitRow,
} from '../types';
import type { Executor } from './executor';
import { NOTIFY_JOBS, type JobNotices } from './job-notices';

const JOB_COLUMNS = `id, account_id AS "accountId", key_id AS "keyId", kind, tool_id AS "toolId", status, price, input,
  error_message AS "errorMessage", ready_set_id AS "readySetId", created_at AS "createdAt", attempts AS "leaseLapses"`;
const LEASE_HELD =
  'EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_units.job_id AND jobs.lease_owner = $LEASE FOR SHARE)';
const leaseUntil = (param: string) => `clock_timestamp() + ${param} * interval '1 millisecond'`;

/** The unit update's WHERE, with the lease check when a worker writes. */
function unitWhere(leaseParam: number | undefined): string {
  const base = "job_id = $1 AND idx = $2 AND status = 'pending'";
  return leaseParam === undefined
    ? base
    : `${base} AND ${LEASE_HELD.replace('$LEASE', `$${leaseParam}`)}`;
}

export class PgJobs implements JobRepository {
  constructor(
    private readonly ex: Executor,
    private readonly notices?: JobNotices,
  ) {}

  insert(job: NewJob, units: readonly { shotId: string | null }[]): Promise<void> {
    return this.ex.atomic(async (ex) => {
      // The notice goes out when the creation commits (not before: the claim it wakes must see
      // the row), in the same round trip as the insert.
      await ex.query(
        `WITH j AS (
           INSERT INTO jobs (${JOB_INSERT_COLUMNS}, status)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'processing') RETURNING 1)
         SELECT ${NOTIFY_JOBS} FROM j`,
        newJobParams(job),
      );
      if (units.length === 0) return;
      await ex.query(
        `INSERT INTO job_units (job_id, idx, shot_id, status)
         SELECT $1, u.ord - 1, u.shot_id, 'pending' FROM unnest($2::text[]) WITH ORDINALITY AS u(shot_id, ord)`,
        [job.id, units.map((u) => u.shotId)],
      );
    });
  }

  async get(id: string): Promise<JobRow | undefined> {
    return (await this.ex.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id]))[0];
  }

  landed(id: string, accountId: string, waitMs: number): Promise<boolean> {
    return this.ex.atomic(async (ex) => {
      await ex.query(`SELECT set_config('lock_timeout', $1, true)`, [`${Math.ceil(waitMs)}ms`]);
      // FOR UPDATE waits out both locks a creation holds on its account's row until it commits or
      // rolls back (the charge's balance UPDATE, the job's foreign key); a server that never got
      // the COMMIT keeps them, and the lock timeout then says so (55P03).
      await ex.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      // READ COMMITTED: this statement's snapshot is taken after the lock, so it sees that commit.
      return (await ex.query('SELECT 1 FROM jobs WHERE id = $1', [id])).length > 0;
    });
  }

  async processingIds(): Promise<string[]> {
    const rows = await this.ex.query<{ id: string }>(
      "SELECT id FROM jobs WHERE status = 'processing' ORDER BY created_at, id",
    );
    return rows.map((r) => r.id);
  }

  unitsOf(jobId: string): Promise<UnitRow[]> {
    return this.ex.query<UnitRow>(
      'SELECT idx, shot_id AS "shotId", status, error_message AS "errorMessage" FROM job_units WHERE job_id = $1 ORDER BY idx',
      [jobId],
    );
  }

  resultsOf(jobId: string): Promise<ResultRow[]> {
    return this.ex.query<ResultRow>(
      'SELECT unit_idx AS "unitIdx", n, blob_id AS "blobId" FROM job_results WHERE job_id = $1 ORDER BY unit_idx, n',
      [jobId],
    );
  }

  async recordProviderCost(jobId: string, provider: string, costUsd: number | null): Promise<void> {
    await this.ex.query(
      `UPDATE jobs SET provider = $2,
         provider_cost_usd = CASE WHEN $3::double precision IS NULL THEN provider_cost_usd ELSE COALESCE(provider_cost_usd, 0) + $3 END
       WHERE id = $1`,
      [jobId, provider, costUsd],
    );
  }

  async markUnitStarted(jobId: string, idx: number, at: string): Promise<void> {
    await this.ex.query(
      "UPDATE job_units SET started_at = $3 WHERE job_id = $1 AND idx = $2 AND status = 'pending'",
      [jobId, idx, at],
    );
  }

  async clearUnitsStarted(units: readonly UnitRef[]): Promise<void> {
    if (units.length === 0) return;
    await this.ex.query(
      `UPDATE job_units SET started_at = NULL FROM unnest($1::text[], $2::int[]) AS u(job_id, idx)
       WHERE job_units.job_id = u.job_id AND job_units.idx = u.idx`,
      [units.map((u) => u.jobId), units.map((u) => u.idx)],
    );
  }

  countInterruptions(): Promise<(UnitRef & { interruptions: number })[]> {
    return this.ex.query(
      `WITH cut AS (
         UPDATE job_units SET interruptions = interruptions + 1, started_at = NULL
         WHERE started_at IS NOT NULL AND status = 'pending'
         RETURNING job_id, idx, interruptions)
       SELECT job_id AS "jobId", idx, interruptions FROM cut ORDER BY job_id, idx`,
    );
  }

  completeUnit(
    jobId: string,
    idx: number,
    blobIds: readonly string[],
    leaseOwner?: string,
  ): Promise<boolean> {
    return this.ex.atomic(async (ex) => {
      const params: unknown[] = [jobId, idx];
      if (leaseOwner !== undefined) params.push(leaseOwner);
      const done = await ex.query(
        `UPDATE job_units SET status = 'completed', started_at = NULL WHERE ${unitWhere(leaseOwner === undefined ? undefined : 3)} RETURNING 1`,
        params,
      );
      if (done.length === 0) return false;
      if (blobIds.length > 0) {
        await ex.query(
          `INSERT INTO job_results (job_id, unit_idx, n, blob_id)
           SELECT $1, $2, b.ord - 1, b.blob_id FROM unnest($3::text[]) WITH ORDINALITY AS b(blob_id, ord)`,
          [jobId, idx, blobIds],
        );
      }
      return true;
    });
  }

  async failUnit(
    jobId: string,
    idx: number,
    message: string,
    leaseOwner?: string,
  ): Promise<boolean> {
    const params: unknown[] = [jobId, idx, message];
    if (leaseOwner !== undefined) params.push(leaseOwner);
    const rows = await this.ex.query(
      `UPDATE job_units SET status = 'failed', error_message = $3, started_at = NULL WHERE ${unitWhere(leaseOwner === undefined ? undefined : 4)} RETURNING 1`,
      params,
    );
    return rows.length === 1;
  }

  async finish(
    jobId: string,
    status: 'completed' | 'failed',
    errorMessage: string | null,
    finishedAt: string,
  ): Promise<boolean> {
    const rows = await this.ex.query(
      `UPDATE jobs SET status = $2, error_message = $3, finished_at = $4, lease_owner = NULL, lease_until = NULL
       WHERE id = $1 AND status = 'processing' RETURNING 1`,
      [jobId, status, errorMessage, finishedAt],
    );
    return rows.length === 1;
  }

  async claim(workerId: string, leaseMs: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    // SKIP LOCKED: rows another claimer (or a worker writing under its lease) holds are passed
    // over, never waited for; the lock taken here keeps them ours until the UPDATE lands. A lease
    // still naming its owner ran out (released ones are cleared): `attempts` counts those lapses.
    const rows = await this.ex.query<{ id: string; createdAt: string }>(
      `UPDATE jobs SET lease_owner = $1, lease_until = ${leaseUntil('$2::bigint')},
         attempts = attempts + (lease_owner IS NOT NULL)::int
       WHERE id IN (
         SELECT id FROM jobs
         WHERE status = 'processing' AND (lease_until IS NULL OR lease_until < clock_timestamp())
         ORDER BY created_at, id
         LIMIT $3
         FOR UPDATE SKIP LOCKED)
       RETURNING id, created_at AS "createdAt"`,
      [workerId, Math.max(1, Math.round(leaseMs)), limit],
    );
    return rows
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
      .map((r) => r.id);
  }

  async renewLease(workerId: string, leaseMs: number): Promise<string[]> {
    const rows = await this.ex.query<{ id: string }>(
      `UPDATE jobs SET lease_until = ${leaseUntil('$2::bigint')} WHERE lease_owner = $1 AND status = 'processing' RETURNING id`,
      [workerId, Math.max(1, Math.round(leaseMs))],
    );
    return rows.map((r) => r.id).sort();
  }

  async releaseLeases(workerId: string): Promise<number> {
    // Other processes' idle workers take what was released at once (the notice is sent at commit).
    const rows = await this.ex.query<{ released: number }>(
      `WITH r AS (
         UPDATE jobs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 RETURNING 1)
       SELECT count(*)::int AS released, CASE WHEN count(*) > 0 THEN ${NOTIFY_JOBS}::text END AS sent FROM r`,
      [workerId],
    );
    return rows[0]?.released ?? 0;
  }

  async releaseFailedRun(
    workerId: string,
    jobId: string,
    opts: { lapse?: boolean; holdMs?: number } = {},
  ): Promise<boolean> {
    // Released with no owner: a claim counts no lapse for it (only leases that ran out), and one
    // held off (lease_until ahead) waits for it to pass.
    const holdMs = Math.max(0, Math.round(opts.holdMs ?? 0));
    const rows = await this.ex.query(
      `WITH r AS (
         UPDATE jobs SET lease_owner = NULL,
           lease_until = CASE WHEN $4::bigint > 0 THEN ${leaseUntil('$4::bigint')} END,
           attempts = attempts + $3::int
         WHERE id = $2 AND lease_owner = $1 AND status = 'processing' RETURNING 1)
       SELECT ${NOTIFY_JOBS}::text AS sent FROM r`,
      [workerId, jobId, opts.lapse === false ? 0 : 1, holdMs],
    );
    return rows.length === 1;
  }

  watchClaimable(onClaimable: () => void): JobWatch {
    if (!this.notices) throw new Error('watchClaimable is for the outer store, not a transaction');
    return this.notices.watch(onClaimable);
  }
}
