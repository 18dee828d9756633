/**
 * The distributed worker loop on real stores (SQLite file; PostgreSQL with a pool per loop, and
 * a worker process killed with SIGKILL). The job run is a stand-in written from the runner's
 * contract: it writes its units' outcomes under its lease, then finishes the job. What is
 * checked: a job never runs twice at once and finishes once; `workers` bounds a loop's jobs and
 * 0 claims nothing; a lost lease aborts the run and its late writes land nowhere; graceful stop
 * returns leases at once; a killed worker's jobs are taken by another after the lease.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LeaseLoop,
  LeaseLost,
  WorkerStopping,
  type LeasedJob,
  type RunLeasedJob,
} from '../../src/core/jobs/lease-loop';
import { openPostgresStore } from '../../src/core/store/pg/index';
import { openSqliteStore } from '../../src/core/store/sqlite/index';
import type { Store } from '../../src/core/store/types';
import { describePostgres } from '../support/postgres';
import { seedJobs } from './helpers/seed-jobs';

const WORKER = path.resolve(import.meta.dirname, 'helpers/lease-worker.ts');

/** Waits for `check` to hold (polling), failing after `ms` with `what`. */
async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await delay(10);
  }
}

/** What the stand-in runs saw, shared by every loop of a test (they run in this process). */
class Tally {
  readonly inFlight = new Map<string, number>();
  readonly overlaps: string[] = [];
  readonly finished: { id: string; by: string }[] = [];
  readonly refusedWrites: { id: string; by: string }[] = [];
  readonly aborted: { id: string; by: string; reason: unknown }[] = [];
  readonly started: { id: string; by: string; at: number }[] = [];
  private readonly perWorker = new Map<string, number>();
  readonly peak = new Map<string, number>();

  enter(job: LeasedJob): void {
    this.started.push({ id: job.id, by: job.leaseOwner, at: Date.now() });
    const n = (this.inFlight.get(job.id) ?? 0) + 1;
    this.inFlight.set(job.id, n);
    if (n > 1) this.overlaps.push(job.id);
    const w = (this.perWorker.get(job.leaseOwner) ?? 0) + 1;
    this.perWorker.set(job.leaseOwner, w);
    this.peak.set(job.leaseOwner, Math.max(w, this.peak.get(job.leaseOwner) ?? 0));
  }

  leave(job: LeasedJob): void {
    this.inFlight.set(job.id, this.inFlight.get(job.id)! - 1);
    this.perWorker.set(job.leaseOwner, this.perWorker.get(job.leaseOwner)! - 1);
  }

  finishedIds(): string[] {
    return this.finished.map((f) => f.id).sort();
  }
}

/**
 * A job run as the runner does it: `work` (the provider), then each pending unit's outcome written
 * under the lease, then the job finished. An abort ends the work (on shutdown, the run); a refused
 * write ends the run.
 */
function standInRun(
  store: Store,
  tally: Tally,
  work: (job: LeasedJob, signal: AbortSignal) => Promise<void>,
): RunLeasedJob {
  return async (job, signal) => {
    tally.enter(job);
    try {
      try {
        await work(job, signal);
      } catch (err) {
        if (!signal.aborted) throw err;
        tally.aborted.push({ id: job.id, by: job.leaseOwner, reason: signal.reason });
        // Shutting down, the runner writes nothing (the job resumes elsewhere). After a lost
        // lease it writes on regardless here, to show such writes land nowhere.
        if (signal.reason instanceof WorkerStopping) return;
      }
      for (const unit of await store.jobs.unitsOf(job.id)) {
        if (unit.status !== 'pending') continue;
        if (!(await store.jobs.completeUnit(job.id, unit.idx, [], job.leaseOwner))) {
          tally.refusedWrites.push({ id: job.id, by: job.leaseOwner });
          return;
        }
      }
      if (await store.jobs.finish(job.id, 'completed', null, new Date().toISOString()))
        tally.finished.push({ id: job.id, by: job.leaseOwner });
    } finally {
      tally.leave(job);
    }
  };
}

const untilAborted = (_job: LeasedJob, signal: AbortSignal) =>
  new Promise<void>((_resolve, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
  );

/** The behaviour every store keeps. `twoStores` gives two handles on one database (SQLite: the same store). */
function describeLeaseLoop(
  name: string,
  twoStores: () => Promise<{ a: Store; b: Store; close(): Promise<void> }>,
): void {
  describe(`lease loop on ${name}`, () => {
    const loops: LeaseLoop[] = [];
    const loop = (options: ConstructorParameters<typeof LeaseLoop>[0]) => {
      const l = new LeaseLoop({ claimIntervalMs: 20, ...options });
      loops.push(l);
      return l;
    };
    const withStores = (fn: (s: { a: Store; b: Store }) => Promise<void>) => async () => {
      const stores = await twoStores();
      try {
        await fn(stores);
      } finally {
        await Promise.all(loops.splice(0).map((l) => l.stop({ abortWaitMs: 2_000 })));
        await stores.close();
      }
    };

    it(
      'runs every job once, never more than `workers` at a time',
      withStores(async ({ a }) => {
        const tally = new Tally();
        const ids = await seedJobs(a, 12);
        const worker = loop({
          jobs: a.jobs,
          workers: 3,
          leaseMs: 10_000,
          runJob: standInRun(a, tally, () => delay(15)),
        }).start();
        await until('every job finished', () => tally.finished.length === 12);
        expect(tally.finishedIds()).toEqual([...ids].sort());
        expect(tally.overlaps).toEqual([]);
        expect(tally.started).toHaveLength(12); // none ran twice
        expect(tally.peak.get(worker.workerId)).toBeLessThanOrEqual(3);
        expect(
          (await Promise.all(ids.map((id) => a.jobs.get(id)))).every(
            (j) => j?.status === 'completed',
          ),
        ).toBe(true);
        expect(await worker.stop()).toBe(0); // finished jobs hold no lease
      }),
    );

    it(
      'with workers 0 claims nothing: the jobs stay unleased for others',
      withStores(async ({ a }) => {
        const ids = await seedJobs(a, 3);
        let ran = 0;
        const apiOnly = loop({
          jobs: a.jobs,
          workers: 0,
          claimIntervalMs: 5,
          runJob: async () => {
            ran++;
          },
        }).start();
        apiOnly.wake();
        await delay(150); // many claim intervals
        expect(ran).toBe(0);
        expect(apiOnly.activeJobs()).toEqual([]);
        expect((await a.jobs.claim('probe', 60_000, 10)).sort()).toEqual([...ids].sort());
        expect(await apiOnly.stop()).toBe(0);
      }),
    );

    it(
      'graceful stop aborts running jobs with WorkerStopping and releases their leases: another worker takes them at once',
      withStores(async ({ a, b }) => {
        const tally = new Tally();
        const ids = await seedJobs(a, 3);
        const worker = loop({
          jobs: a.jobs,
          workers: 2,
          leaseMs: 60_000,
          runJob: standInRun(a, tally, untilAborted),
        }).start();
        await until('two jobs run', () => worker.activeJobs().length === 2);
        expect(await worker.stop({ drainMs: 0 })).toBe(2);
        expect(tally.aborted.map((x) => x.reason)).toEqual([
          expect.any(WorkerStopping),
          expect.any(WorkerStopping),
        ]);
        expect(worker.activeJobs()).toEqual([]);
        expect(tally.finished).toEqual([]);
        // Leases of 60 s, yet all three are free now (the third was never claimed: 2 workers).
        expect((await b.jobs.claim('next-worker', 60_000, 10)).sort()).toEqual([...ids].sort());
      }),
    );

    it(
      'keeps a job longer than its lease (renewed every lease/3) from a rival claiming all the while, and drains it on stop',
      withStores(async ({ a, b }) => {
        const tally = new Tally();
        const [id] = await seedJobs(a, 1);
        const worker = loop({
          jobs: a.jobs,
          workers: 1,
          leaseMs: 1_200,
          runJob: standInRun(a, tally, () => delay(2_500)),
        }).start();
        await until('the job runs', () => worker.activeJobs().length === 1);
        let rivalGot: string[] = [];
        let rivalTries = 0;
        const rival = (async () => {
          while (tally.finished.length === 0 && rivalGot.length === 0) {
            rivalGot = await b.jobs.claim('rival', 60_000, 1);
            rivalTries++;
            await delay(25);
          }
        })();
        expect(await worker.stop({ drainMs: 30_000 })).toBe(0); // waited for it to finish
        await rival;
        expect(rivalTries).toBeGreaterThan(5);
        expect(rivalGot).toEqual([]);
        expect(tally.finished).toEqual([{ id, by: worker.workerId }]);
        expect(tally.aborted).toEqual([]);
      }),
    );

    it(
      'aborts a job missing from the renewal answer with LeaseLost; its late writes land nowhere and the new holder finishes it',
      withStores(async ({ a, b }) => {
        const tally = new Tally();
        const [id] = await seedJobs(a, 1, 2);
        const worker = loop({
          jobs: a.jobs,
          workers: 1,
          leaseMs: 900,
          runJob: standInRun(a, tally, untilAborted),
        }).start();
        await until('the job runs', () => worker.activeJobs().length === 1);
        // Taken away (as when its lease lapsed during a stall) and claimed by another worker.
        await b.jobs.releaseLeases(worker.workerId);
        expect(await b.jobs.claim('new-holder', 60_000, 1)).toEqual([id]);
        await until('the run was aborted', () => tally.aborted.length === 1);
        expect(tally.aborted[0]!.reason).toBeInstanceOf(LeaseLost);
        await until('its late write was refused', () => tally.refusedWrites.length === 1);
        expect((await b.jobs.unitsOf(id!)).map((u) => u.status)).toEqual(['pending', 'pending']);
        expect(worker.activeJobs()).toEqual([]);
        // The new holder's writes land.
        expect(await b.jobs.completeUnit(id!, 0, [], 'new-holder')).toBe(true);
        expect(await b.jobs.completeUnit(id!, 1, [], 'new-holder')).toBe(true);
      }),
    );

    it(
      'aborts its jobs once renewals have failed for a whole lease (another process may have them by then)',
      withStores(async ({ a }) => {
        const tally = new Tally();
        await seedJobs(a, 1);
        let databaseDown = false;
        // The store's own repository, with renewals failing as when the database is unreachable.
        const jobs = {
          claim: a.jobs.claim.bind(a.jobs),
          releaseLeases: a.jobs.releaseLeases.bind(a.jobs),
          renewLease: (workerId: string, leaseMs: number) =>
            databaseDown
              ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'))
              : a.jobs.renewLease(workerId, leaseMs),
        };
        const logged: string[] = [];
        const worker = loop({
          jobs,
          workers: 1,
          leaseMs: 300,
          runJob: standInRun(a, tally, untilAborted),
          log: (m) => logged.push(m),
        }).start();
        await until('the job runs', () => worker.activeJobs().length === 1);
        databaseDown = true;
        await until('the run was aborted', () => tally.aborted.length === 1);
        expect(tally.aborted[0]!.reason).toBeInstanceOf(LeaseLost);
        expect(String(tally.aborted[0]!.reason)).toMatch(
          /lease ran out while the database did not answer/,
        );
        expect(logged.some((m) => m.includes('renewing leases failed: connect ECONNREFUSED'))).toBe(
          true,
        );
        databaseDown = false;
      }),
    );

    it(
      'two loops on one database never run one job at once, and every job finishes once',
      withStores(async ({ a, b }) => {
        const tally = new Tally();
        const run = (store: Store) =>
          standInRun(store, tally, () => delay(5 + Math.floor(Math.random() * 30)));
        const first = loop({
          jobs: a.jobs,
          workers: 4,
          leaseMs: 10_000,
          claimIntervalMs: 5,
          runJob: run(a),
        }).start();
        const second = loop({
          jobs: b.jobs,
          workers: 4,
          leaseMs: 10_000,
          claimIntervalMs: 5,
          runJob: run(b),
        }).start();
        const ids = await seedJobs(a, 40); // both loops are polling as the jobs arrive
        await until('every job finished', () => tally.finished.length === 40);
        expect(tally.finishedIds()).toEqual([...ids].sort());
        expect(tally.overlaps).toEqual([]);
        expect(tally.started).toHaveLength(40);
        expect(tally.refusedWrites).toEqual([]);
        expect(tally.peak.get(first.workerId) ?? 0).toBeLessThanOrEqual(4);
        expect(tally.peak.get(second.workerId) ?? 0).toBeLessThanOrEqual(4);
        const byWorker = new Map<string, number>();
        for (const f of tally.finished) byWorker.set(f.by, (byWorker.get(f.by) ?? 0) + 1);
        console.log(
          `[lease-loop ${name}] jobs finished per loop: ${[...byWorker.values()].join(' + ')}`,
        );
      }),
    );
  });
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-lease-loop-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let files = 0;

describeLeaseLoop('SQLite', async () => {
  // One process per SQLite file: both loops share its one store.
  const store = openSqliteStore(path.join(root, `core-${files++}.db`));
  return { a: store, b: store, close: () => store.close() };
});

describePostgres('lease loop on PostgreSQL across pools and processes', (databaseUrl) => {
  const freshSchema = () => `lease_${randomBytes(6).toString('hex')}`;

  describeLeaseLoop('PostgreSQL', async () => {
    const schema = freshSchema();
    const a = await openPostgresStore(databaseUrl(), {
      schema,
      max: 5,
      applicationName: 'lease-loop-a',
    });
    const b = await openPostgresStore(databaseUrl(), {
      schema,
      max: 5,
      applicationName: 'lease-loop-b',
    });
    return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
  });

  it('an idle worker takes a job another process creates at once (LISTEN/NOTIFY), not at its next poll, also after its listening connection was cut', async () => {
    const schema = freshSchema();
    const app = `lease-notify-${randomBytes(3).toString('hex')}`;
    const creator = await openPostgresStore(databaseUrl(), { schema, max: 2 });
    const workerStore = await openPostgresStore(databaseUrl(), {
      schema,
      max: 2,
      applicationName: app,
    });
    // A service in another schema of the same database: its jobs must not wake this worker.
    const otherSchema = await openPostgresStore(databaseUrl(), { schema: freshSchema(), max: 2 });
    const tally = new Tally();
    const worker = new LeaseLoop({
      jobs: workerStore.jobs,
      workers: 2,
      leaseMs: 30_000,
      claimIntervalMs: 3_600_000, // the poll never comes within this test
      runJob: standInRun(workerStore, tally, () => delay(5)),
    }).start();
    try {
      await worker.watching();
      await delay(200); // the claim made at start has found nothing
      expect(tally.started).toEqual([]);

      await seedJobs(otherSchema, 1);
      const t0 = Date.now();
      const [first] = await seedJobs(creator, 1);
      await until('the idle worker took the new job', () => tally.finished.length === 1, 5_000);
      expect(tally.finishedIds()).toEqual([first]);
      const firstWait = tally.started[0]!.at - t0;

      // Cut the listening connection: it comes back (a new backend) and notices work again.
      const admin = new pg.Client({ connectionString: databaseUrl() });
      await admin.connect();
      try {
        const listener = async () =>
          (
            await admin.query<{ pid: number }>(
              'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
              [`${app}:listen`],
            )
          ).rows[0]?.pid;
        const before = await listener();
        expect(before).toBeDefined();
        await admin.query('SELECT pg_terminate_backend($1)', [before]);
        await until(
          'a new listening connection',
          async () => {
            const now = await listener();
            return now !== undefined && now !== before;
          },
          15_000,
        );
        await worker.watching();
      } finally {
        await admin.end();
      }
      const t1 = Date.now();
      const [second] = await seedJobs(creator, 1);
      await until('the worker took the next job', () => tally.finished.length === 2, 5_000);
      expect(tally.finishedIds()).toEqual([first, second].sort());
      const secondWait = tally.started[1]!.at - t1;
      // Both well within the hour-long poll: taken on the notice (loose bound for a busy machine).
      expect(Math.max(firstWait, secondWait)).toBeLessThan(3_000);
      expect(tally.overlaps).toEqual([]);
    } finally {
      await worker.stop();
      await Promise.all([creator.close(), workerStore.close(), otherSchema.close()]);
    }
  }, 60_000);

  it('a worker process killed with SIGKILL mid-job: another takes its jobs once the lease has run out, and each finishes once', async () => {
    const schema = freshSchema();
    const store = await openPostgresStore(databaseUrl(), {
      schema,
      max: 5,
      applicationName: 'lease-loop-survivor',
    });
    let child: ChildProcess | undefined;
    let survivor: LeaseLoop | undefined;
    try {
      const ids = await seedJobs(store, 2);
      const leaseMs = 4_000;
      child = fork(WORKER, [JSON.stringify({ url: databaseUrl(), schema, workers: 2, leaseMs })], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      const started: { started: string; at: number }[] = [];
      let deadWorker = '';
      child.on('message', (m: { started?: string; at?: number; ready?: string }) => {
        if (m.ready) deadWorker = m.ready;
        if (m.started) started.push({ started: m.started, at: m.at! });
      });
      await until(
        `the worker process runs both jobs (stderr: ${stderr})`,
        () => started.length === 2 && deadWorker !== '',
        60_000,
      );
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;

      // Its leases outlive it: nothing to claim yet.
      expect(await store.jobs.claim('probe', 60_000, 10)).toEqual([]);

      const tally = new Tally();
      survivor = new LeaseLoop({
        jobs: store.jobs,
        workers: 2,
        leaseMs,
        claimIntervalMs: 50,
        runJob: standInRun(store, tally, () => delay(10)),
      }).start();
      await until('the survivor finished both jobs', () => tally.finished.length === 2, 60_000);
      expect(tally.finishedIds()).toEqual([...ids].sort());
      expect(tally.finished.every((f) => f.by === survivor!.workerId)).toBe(true);
      expect(tally.overlaps).toEqual([]);
      // Not before the lease ran out (loosely: the dead worker reported after its claim).
      expect(
        Math.min(...tally.started.map((s) => s.at)) - Math.max(...started.map((s) => s.at)),
      ).toBeGreaterThanOrEqual(leaseMs / 2);
      // Writes under the dead worker's name land nowhere now.
      expect(await store.jobs.completeUnit(ids[0]!, 0, [], deadWorker)).toBe(false);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await survivor?.stop();
      await store.close();
    }
  }, 90_000);
});
