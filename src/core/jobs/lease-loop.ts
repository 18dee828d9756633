/**
 * The distributed worker loop (team mode, `serve --workers N`): claims jobs with a lease from the
 * store whenever it has a free slot, renews the leases it holds every lease/3, and hands each
 * claimed job to an injected `runJob(job, signal)` (the job runner). Works over the Store's
 * JobRepository only, so it runs the same on PostgreSQL (many processes) and SQLite (one).
 *
 * - A job missing from a renewal's answer was lost (its lease lapsed and another worker may hold
 *   it now): its signal aborts with LeaseLost. So does every job when renewals have failed for a
 *   whole lease, since by then another process may have taken them. Writes of a unit's outcome
 *   name the lease owner, so a run that ignores its signal still changes nothing.
 * - `stop()` (graceful shutdown) stops claiming, lets running jobs finish within the drain time,
 *   aborts the rest (WorkerStopping) and releases every lease, so other processes take them at
 *   once. A process that dies without stopping (kill -9) leaves its leases to run out.
 * - Only one claim or renewal of a loop is in flight at a time: a renewal answer then always
 *   covers every claim made before it (an overlapping claim would look like a lost lease).
 * - Where the store can say when jobs become claimable (PostgreSQL's LISTEN/NOTIFY: a job
 *   inserted or leases released by any process), an idle slot claims at once; the claim poll
 *   stays as the fallback for notices lost while the listening connection is down.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { z } from 'zod';
import type { JobRepository, JobWatch } from '../store/types';
import { blobStoreFailure } from './runner';

/** A job this worker holds: its id and the lease owner to name in its writes. */
export type LeasedJob = { id: string; leaseOwner: string };
/** Runs a claimed job to its end; must return soon after `signal` aborts (its reason says why). */
export type RunLeasedJob = (job: LeasedJob, signal: AbortSignal) => Promise<void>;

/** The job's lease was lost (another worker may run it now): stop and write nothing. */
export class LeaseLost extends Error {
  override name = 'LeaseLost';
}
/** This worker is shutting down: stop; the lease is released and another process resumes the job. */
export class WorkerStopping extends Error {
  override name = 'WorkerStopping';
}

const OptionsSchema = z.object({
  /** Jobs run here at once, the claim limit (`serve --workers N`); 0 = API only: never claims. */
  workers: z.number().int().min(0).max(10_000),
  /** How long a claim or renewal holds a job (default 30 s): a dead process's jobs wait this long. */
  leaseMs: z
    .number()
    .int()
    .min(30)
    .max(24 * 3_600_000)
    .default(30_000),
  /**
   * How long a job whose run gave up on the blob store (S3 away) waits before any worker claims it
   * again (default 5 s).
   */
  storageHoldMs: z.number().int().min(0).max(3_600_000).default(5_000),
  /** How often an idle slot looks for new jobs (default 500 ms); a finished job looks at once. */
  claimIntervalMs: z.number().int().min(1).max(3_600_000).default(500),
  /** Names this worker in `jobs.lease_owner` (default host:pid:random). */
  workerId: z.string().min(1).max(200).optional(),
});

export type LeaseLoopOptions = z.input<typeof OptionsSchema> & {
  jobs: Pick<
    JobRepository,
    'claim' | 'renewLease' | 'releaseLeases' | 'releaseFailedRun' | 'watchClaimable'
  >;
  runJob: RunLeasedJob;
  log?: (message: string) => void;
};

/** A worker id unique across machines and restarts, readable in pg_stat_activity and logs. */
export function newWorkerId(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

type Running = {
  controller: AbortController;
  done: Promise<void>;
  /** When (this machine's clock) the call that last confirmed the lease began. */
  confirmedAt: number;
  /** Reclaimed while its aborted run was winding down: run again once it has returned. */
  again?: number;
};

export class LeaseLoop {
  readonly workerId: string;
  private readonly workers: number;
  private readonly leaseMs: number;
  private readonly claimIntervalMs: number;
  private readonly storageHoldMs: number;
  private readonly running = new Map<string, Running>();
  /**
   * Jobs whose failed run is giving its lease up: no longer running here but still held until the
   * release commits, so a renewal must not take them for jobs to run again here (another worker
   * claims them once released: two runs).
   */
  private readonly givingUp = new Set<string>();
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private claimTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  /** The chain every claim and renewal runs on, one at a time. */
  private chain: Promise<void> = Promise.resolve();
  private claimQueued = false;
  private stopped: Promise<number> | undefined;
  private watch: JobWatch | undefined;

  constructor(private readonly opts: LeaseLoopOptions) {
    const parsed = OptionsSchema.parse({
      workers: opts.workers,
      leaseMs: opts.leaseMs,
      claimIntervalMs: opts.claimIntervalMs,
      storageHoldMs: opts.storageHoldMs,
      workerId: opts.workerId,
    });
    this.storageHoldMs = parsed.storageHoldMs;
    this.workers = parsed.workers;
    this.leaseMs = parsed.leaseMs;
    this.claimIntervalMs = parsed.claimIntervalMs;
    this.workerId = parsed.workerId ?? newWorkerId();
  }

  /** Starts claiming (at once, then every claim interval) and renewing. With 0 workers it does nothing. */
  start(): this {
    if (this.state !== 'new') throw new Error('a LeaseLoop starts once');
    this.state = 'running';
    if (this.workers === 0) return this;
    this.claimTimer = setInterval(() => this.wake(), this.claimIntervalMs).unref();
    this.watch = this.opts.jobs.watchClaimable?.(() => this.wake());
    this.renewTimer = setInterval(
      () => this.queue(() => this.renew()),
      Math.max(10, Math.floor(this.leaseMs / 3)),
    ).unref();
    this.wake();
    return this;
  }

  /** Looks for jobs now if a slot is free (e.g. right after this process created one). */
  wake(): void {
    if (this.state !== 'running' || this.workers === 0 || this.claimQueued) return;
    this.claimQueued = true;
    this.queue(async () => {
      this.claimQueued = false;
      await this.claim();
    });
  }

  /**
   * Resolves once notices of new jobs are being received (at once where the store has none, or
   * once stopped): from then on an idle slot claims a new job without waiting for the poll.
   */
  async watching(): Promise<void> {
    await this.watch?.ready();
  }

  /** Ids of the jobs running here now. */
  activeJobs(): string[] {
    return [...this.running.keys()];
  }

  /**
   * Graceful shutdown: stops claiming, waits up to `drainMs` (default 0) for running jobs while
   * still renewing their leases, aborts the rest with WorkerStopping and waits up to
   * `abortWaitMs` (default 5 s) for them to return, then releases every lease this worker holds.
   * Resolves with how many leases were released.
   */
  stop(options: { drainMs?: number; abortWaitMs?: number } = {}): Promise<number> {
    this.stopped ??= this.shutDown(options.drainMs ?? 0, options.abortWaitMs ?? 5_000);
    return this.stopped;
  }

  /**
   * Stops at once (a second SIGTERM during the drain): stops claiming and renewing, aborts every
   * run with WorkerStopping without waiting for it, and releases this worker's leases, trying for
   * at most `releaseWithinMs` (default 2 s). Resolves with how many were released, or null when
   * the release did not answer in time (the leases then run out within the lease time).
   */
  async halt(options: { releaseWithinMs?: number } = {}): Promise<number | null> {
    this.state = 'stopping';
    clearInterval(this.claimTimer);
    clearInterval(this.renewTimer);
    const watch = this.watch;
    this.watch = undefined;
    void watch?.stop().catch(() => undefined);
    for (const [, entry] of this.running)
      if (!entry.controller.signal.aborted)
        entry.controller.abort(new WorkerStopping(`worker ${this.workerId} is stopping at once`));
    if (this.workers === 0) return 0;
    // Not on the chain: a claim or renewal stuck on an unanswering database must not hold it.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>(
      (resolve) => (timer = setTimeout(resolve, options.releaseWithinMs ?? 2_000, null)),
    );
    try {
      return await Promise.race([this.opts.jobs.releaseLeases(this.workerId), timeout]);
    } catch (err) {
      this.log(
        `could not release the leases of ${this.workerId} (they run out within ${this.leaseMs} ms): ${describe(err)}`,
      );
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  private async shutDown(drainMs: number, abortWaitMs: number): Promise<number> {
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    clearInterval(this.claimTimer);
    const watch = this.watch;
    this.watch = undefined;
    await watch?.stop();
    if (!wasRunning || this.workers === 0) {
      clearInterval(this.renewTimer);
      this.state = 'stopped';
      return 0;
    }
    await settledWithin(this.runs(), drainMs);
    for (const [, entry] of this.running)
      entry.controller.abort(new WorkerStopping(`worker ${this.workerId} is shutting down`));
    await settledWithin(this.runs(), abortWaitMs);
    clearInterval(this.renewTimer);
    await this.chain;
    let released = 0;
    try {
      released = await this.opts.jobs.releaseLeases(this.workerId);
    } catch (err) {
      this.log(
        `could not release the leases of ${this.workerId} (they run out within ${this.leaseMs} ms): ${describe(err)}`,
      );
    }
    this.state = 'stopped';
    return released;
  }

  private runs(): Promise<unknown> {
    return Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private queue(step: () => Promise<void>): void {
    this.chain = this.chain
      .then(step)
      .catch((err: unknown) => this.log(`lease loop: ${describe(err)}`));
  }

  private async claim(): Promise<void> {
    const free = this.workers - this.running.size;
    if (this.state !== 'running' || free <= 0) return;
    const asked = Date.now();
    let ids: string[];
    try {
      ids = await this.opts.jobs.claim(this.workerId, this.leaseMs, free);
    } catch (err) {
      this.log(
        `claiming jobs failed (tried again in ${this.claimIntervalMs} ms): ${describe(err)}`,
      );
      return;
    }
    // Claimed while stopping: left held, and released by stop() with the rest. A job whose failed
    // run is giving it up is not run here again: its lease lapsed while a renewal was held up and
    // this claim took it back, and the release queued behind this claim gives it up.
    if (this.state === 'running')
      for (const id of ids) if (!this.givingUp.has(id)) this.launch(id, asked);
  }

  private async renew(): Promise<void> {
    if (this.state === 'stopped') return;
    const asked = Date.now();
    let held: string[];
    try {
      held = await this.opts.jobs.renewLease(this.workerId, this.leaseMs);
    } catch (err) {
      this.log(`renewing leases failed: ${describe(err)}`);
      // Past a whole lease without a renewal, another process may have taken any of them.
      for (const [id, entry] of this.running) {
        if (!entry.controller.signal.aborted && Date.now() - entry.confirmedAt >= this.leaseMs)
          this.lose(id, entry, 'its lease ran out while the database did not answer');
      }
      return;
    }
    const holding = new Set(held);
    for (const [id, entry] of this.running) {
      if (entry.controller.signal.aborted) continue;
      if (holding.has(id)) entry.confirmedAt = asked;
      else
        this.lose(
          id,
          entry,
          'its lease was lost (it lapsed or was released, and another worker may hold it)',
        );
    }
    // Held but not running here: its run returned without finishing it (e.g. a database error
    // mid-run). It is still ours, so it runs again (at most once per renewal interval).
    if (this.state === 'running')
      for (const id of held)
        if (!this.running.has(id) && !this.givingUp.has(id)) this.launch(id, asked);
  }

  /**
   * A run that ended on an error (the database went away mid-run: its unit stays pending, nothing
   * is refunded) gives its job up at once, counted as a lapse, so any worker runs it again and a
   * job that fails every run ends failed and refunded like one that kills its worker. When the
   * database does not take that either, the lease is left to run out (or this worker runs the
   * job again after its next renewal).
   */
  private async giveUpFailedRun(id: string, err: unknown): Promise<void> {
    const why = `job ${id}: run failed on ${this.workerId}: ${describe(err)}`;
    if (!this.opts.jobs.releaseFailedRun) {
      this.log(`${why}; it runs again here after the next lease renewal`);
      return;
    }
    // The blob store failed, not the job nor this process: a pause before any worker claims it
    // again, so an outage is waited out. An input that could not be read costs nothing to run
    // again: no lapse (lapses fail the job after a few; the runner fails the shot once the reads
    // have failed for its time bound, 10 min). A paid result that could not be stored
    // still counts one: each rerun pays the provider again, so a long outage ends the job
    // (refunded) after a few, as before (review rev28 defect 2).
    const storage = blobStoreFailure(err);
    const lapse = storage !== 'read';
    try {
      const released = await this.opts.jobs.releaseFailedRun(
        this.workerId,
        id,
        storage ? { lapse, holdMs: this.storageHoldMs } : {},
      );
      const counted = lapse ? 'one lapse counted' : 'no lapse counted';
      this.log(
        !released
          ? `${why}; its lease was no longer held here`
          : storage
            ? `${why}; the blob store failed: its lease is released (${counted}), any worker runs it again in ${this.storageHoldMs} ms`
            : `${why}; its lease is released (${counted}) for any worker to run it again`,
      );
    } catch (releaseErr) {
      this.log(
        `${why}; releasing its lease failed too (${describe(releaseErr)}): it runs again here after the next renewal, or elsewhere once the lease runs out (${this.leaseMs} ms)`,
      );
    }
  }

  private lose(id: string, entry: Running, why: string): void {
    this.log(`job ${id}: stopped on ${this.workerId}: ${why}`);
    entry.controller.abort(new LeaseLost(`job ${id}: ${why}`));
  }

  private launch(id: string, confirmedAt: number): void {
    const current = this.running.get(id);
    if (current) {
      // Still winding down after an abort, and ours again: run it once that run has returned.
      if (current.controller.signal.aborted) current.again = confirmedAt;
      else current.confirmedAt = confirmedAt;
      return;
    }
    const controller = new AbortController();
    const entry: Running = { controller, confirmedAt, done: Promise.resolve() };
    this.running.set(id, entry);
    entry.done = Promise.resolve()
      .then(() => this.opts.runJob({ id, leaseOwner: this.workerId }, controller.signal))
      .then(
        () => undefined,
        (err: unknown) => (controller.signal.aborted ? undefined : { err }),
      )
      .then(async (failed) => {
        // No longer running here before its lease is given up: a claim answering the release's
        // notice must find the slot free. The release runs on the chain, after any renewal in
        // flight (whose answer still lists the job, skipped while giving up) and before the next.
        if (failed) this.givingUp.add(id);
        this.running.delete(id);
        if (failed) {
          const release = new Promise<void>((resolve) =>
            this.queue(() => this.giveUpFailedRun(id, failed.err).finally(resolve)),
          );
          await release;
          this.givingUp.delete(id);
        }
      })
      .finally(() => {
        if (entry.again !== undefined && this.state === 'running') this.launch(id, entry.again);
        else this.wake(); // a slot is free
      });
  }

  private log(message: string): void {
    this.opts.log?.(message);
  }
}

function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]).then(() => clearTimeout(timer));
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
