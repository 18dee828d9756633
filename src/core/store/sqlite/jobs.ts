import { JOB_INSERT_COLUMNS, newJobParams } from '../job-row';
import type { JobRepository, JobRow, NewJob, ResultRow, UnitRef, UnitRow } from '../types';
import { SqliteRepository } from './gate';

const JOB_COLUMNS = `id, account_id AS accountId, key_id AS keyId, kind, tool_id AS toolId, status, price, input,
  error_message AS errorMessage, ready_set_id AS readySetId, created_at AS createdAt`;
const HELD_BY =
  'EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_units.job_id AND jobs.lease_owner = ?)';

/** Lease times come from this machine's clock: one SQLite file is used by one machine. */
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

export class SqliteJobs extends SqliteRepository implements JobRepository {
  insert(job: NewJob, units: readonly { shotId: string | null }[]): Promise<void> {
    return this.run((db) =>
      db.transaction(() => {
        db.prepare(
          `INSERT INTO jobs (${JOB_INSERT_COLUMNS}, status)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'processing')`,
        ).run(...newJobParams(job));
        const unit = db.prepare(
          "INSERT INTO job_units (job_id, idx, shot_id, status) VALUES (?, ?, ?, 'pending')",
        );
        units.forEach((u, idx) => unit.run(job.id, idx, u.shotId));
      })(),
    );
  }

  get(id: string): Promise<JobRow | undefined> {
    return this.run(
      (db) =>
        db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`).get(id) as JobRow | undefined,
    );
  }

  /** One connection, transactions run whole: a creation's outcome is never left unknown here. */
  async landed(id: string): Promise<boolean> {
    return (await this.get(id)) !== undefined;
  }

  processingIds(): Promise<string[]> {
    return this.run((db) =>
      (
        db.prepare("SELECT id FROM jobs WHERE status = 'processing' ORDER BY created_at").all() as {
          id: string;
        }[]
      ).map((r) => r.id),
    );
  }

  unitsOf(jobId: string): Promise<UnitRow[]> {
    return this.run(
      (db) =>
        db
          .prepare(
            'SELECT idx, shot_id AS shotId, status, error_message AS errorMessage FROM job_units WHERE job_id = ? ORDER BY idx',
          )
          .all(jobId) as UnitRow[],
    );
  }

  resultsOf(jobId: string): Promise<ResultRow[]> {
    // Polls read this on every request. Measured with SQLite 3.54: a join with blobs costs 26 µs and
    // an ORDER BY (even one the primary key satisfies) 17 µs, against 4 µs for the plain lookup;
    // the handful of rows is sorted here instead.
    return this.run((db) =>
      (
        db
          .prepare(
            'SELECT unit_idx AS unitIdx, n, blob_id AS blobId FROM job_results WHERE job_id = ?',
          )
          .all(jobId) as ResultRow[]
      ).sort((a, b) => a.unitIdx - b.unitIdx || a.n - b.n),
    );
  }

  recordProviderCost(jobId: string, provider: string, costUsd: number | null): Promise<void> {
    return this.run((db) => {
      db.prepare(
        'UPDATE jobs SET provider = ?, provider_cost_usd = CASE WHEN ? IS NULL THEN provider_cost_usd ELSE COALESCE(provider_cost_usd, 0) + ? END WHERE id = ?',
      ).run(provider, costUsd, costUsd, jobId);
    });
  }

  markUnitStarted(jobId: string, idx: number, at: string): Promise<void> {
    return this.run((db) => {
      db.prepare(
        "UPDATE job_units SET started_at = ? WHERE job_id = ? AND idx = ? AND status = 'pending'",
      ).run(at, jobId, idx);
    });
  }

  clearUnitsStarted(units: readonly UnitRef[]): Promise<void> {
    return this.run((db) =>
      db.transaction(() => {
        const clear = db.prepare(
          'UPDATE job_units SET started_at = NULL WHERE job_id = ? AND idx = ?',
        );
        for (const u of units) clear.run(u.jobId, u.idx);
      })(),
    );
  }

  countInterruptions(): Promise<(UnitRef & { interruptions: number })[]> {
    return this.run(
      (db) =>
        db
          .prepare(
            `UPDATE job_units SET interruptions = interruptions + 1, started_at = NULL
             WHERE started_at IS NOT NULL AND status = 'pending'
             RETURNING job_id AS jobId, idx, interruptions`,
          )
          .all() as (UnitRef & { interruptions: number })[],
    );
  }

  completeUnit(
    jobId: string,
    idx: number,
    blobIds: readonly string[],
    leaseOwner?: string,
  ): Promise<boolean> {
    return this.run((db) =>
      db.transaction(() => {
        const sql =
          "UPDATE job_units SET status = 'completed', started_at = NULL WHERE job_id = ? AND idx = ? AND status = 'pending'";
        const changed =
          leaseOwner === undefined
            ? db.prepare(sql).run(jobId, idx).changes
            : db.prepare(`${sql} AND ${HELD_BY}`).run(jobId, idx, leaseOwner).changes;
        if (changed === 0) return false;
        const insert = db.prepare(
          'INSERT INTO job_results (job_id, unit_idx, n, blob_id) VALUES (?, ?, ?, ?)',
        );
        blobIds.forEach((blobId, n) => insert.run(jobId, idx, n, blobId));
        return true;
      })(),
    );
  }

  failUnit(jobId: string, idx: number, message: string, leaseOwner?: string): Promise<boolean> {
    return this.run((db) => {
      const sql =
        "UPDATE job_units SET status = 'failed', error_message = ?, started_at = NULL WHERE job_id = ? AND idx = ? AND status = 'pending'";
      const result =
        leaseOwner === undefined
          ? db.prepare(sql).run(message, jobId, idx)
          : db.prepare(`${sql} AND ${HELD_BY}`).run(message, jobId, idx, leaseOwner);
      return result.changes === 1;
    });
  }

  finish(
    jobId: string,
    status: 'completed' | 'failed',
    errorMessage: string | null,
    finishedAt: string,
  ): Promise<boolean> {
    return this.run(
      (db) =>
        db
          .prepare(
            "UPDATE jobs SET status = ?, error_message = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ? AND status = 'processing'",
          )
          .run(status, errorMessage, finishedAt, jobId).changes === 1,
    );
  }

  claim(workerId: string, leaseMs: number, limit: number): Promise<string[]> {
    return this.run((db) => {
      const now = new Date().toISOString();
      const rows = db
        .prepare(
          `UPDATE jobs SET lease_owner = ?, lease_until = ?
           WHERE id IN (SELECT id FROM jobs WHERE status = 'processing' AND (lease_until IS NULL OR lease_until < ?)
                        ORDER BY created_at LIMIT ?)
           RETURNING id`,
        )
        .all(workerId, inMs(leaseMs), now, limit) as { id: string }[];
      return rows.map((r) => r.id);
    });
  }

  renewLease(workerId: string, leaseMs: number): Promise<string[]> {
    return this.run((db) =>
      (
        db
          .prepare('UPDATE jobs SET lease_until = ? WHERE lease_owner = ? RETURNING id')
          .all(inMs(leaseMs), workerId) as { id: string }[]
      ).map((r) => r.id),
    );
  }

  releaseLeases(workerId: string): Promise<number> {
    return this.run(
      (db) =>
        db
          .prepare('UPDATE jobs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?')
          .run(workerId).changes,
    );
  }
}
