/**
 * Runs jobs in the background with bounded concurrency. Every unit's outcome is written in one
 * transaction; a job leaves `processing` exactly once, and a job that ends failed is refunded in
 * the same transaction (the ledger's unique index makes a second refund impossible). At start,
 * jobs left `processing` are resumed: every unfinished unit runs (again). Only a unit a crash cut
 * while it ran counts as interrupted; queued units and a clean shutdown count nothing.
 */
import pLimit from 'p-limit';
import type { Store, UnitRow } from '../store/types';
import type { Clock } from '../clock';
import { recordBlob, type BlobStore } from '../media/blob-store';
import { BlobMissing } from '../media/blob-content';
import type { ImageResolver, StoredImage } from '../media/resolve';
import type { ProviderAdapter, ProviderJob, ProviderOutput } from '../providers/types';
import { refund } from '../ledger';
import { JobInputSchema, type StoredUnit } from './job-input';
import type { LeasedJob } from './lease-loop';

/**
 * How one run of a job is held: in-process (one process per SQLite file) or under a lease
 * (team mode): then `signal` aborts when the lease is lost or the worker stops, and every write of
 * a unit's outcome names `leaseOwner`, so a run that lost its lease writes nothing.
 */
type Run = {
  signal: AbortSignal;
  leaseOwner?: string;
  /** In-process runs: this process's earlier runs of the job that gave up (a store failed). */
  failedRuns?: number;
};

/** A lost lease's write was refused: rolls back the transaction it ran in (the result's blob rows). */
class LeaseNotHeld extends Error {
  override name = 'LeaseNotHeld';
}

/**
 * Writing a paid result's bytes to the blob store failed (an S3 blip, a full disk): like the
 * database going away, it says nothing about the result, which is tried again and never failed.
 */
class BlobWriteFailed extends Error {
  override name = 'BlobWriteFailed';
}

/**
 * Reading an input's bytes from the blob store failed (an S3 blip, not a missing object): it says
 * nothing about the shot, so the copy is tried again, then the run ends with the unit pending
 * (like BlobWriteFailed). Its message stays in the server log, never in the customer's job.
 */
class BlobReadFailed extends Error {
  override name = 'BlobReadFailed';
}

/**
 * The blob store failed under a run, which gave up with its unit pending: `read` (an input could
 * not be copied, nothing paid to the provider yet) or `write` (a paid result could not be stored,
 * after ~45 s of tries under a lease). Null for any other failure.
 */
export function blobStoreFailure(err: unknown): 'read' | 'write' | null {
  if (err instanceof BlobReadFailed) return 'read';
  if (err instanceof BlobWriteFailed) return 'write';
  return null;
}

/**
 * The database went away (connection lost, session terminated: the store's DatabaseUnavailable),
 * as opposed to a statement it refused. Such a failure says nothing about the shot: the unit is
 * never failed (nor the job refunded) for it; the run ends and the job runs again.
 */
export function isStoreUnavailable(err: unknown): boolean {
  return err instanceof Error && err.name === 'DatabaseUnavailable';
}

/** Pauses before the outcome's write is tried again after the database went away (~4 s in all). */
const OUTCOME_RETRY_MS = [250, 500, 1_000, 2_000];
/**
 * Pauses before a leased run's paid result is written again after the blob store failed (~45 s in
 * all). Longer than for the database: the lease holds meanwhile (its renewals need only the
 * database), and a run that gave up is run again elsewhere, paying the provider again.
 */
const LEASED_BLOB_WRITE_RETRY_MS = [250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000];
/**
 * Pauses before an in-process run that gave up (its store or blob store failed) runs again, one
 * per failed run, the last repeated: the store gets time to come back, and a rerun that pays the
 * provider again is not made in a tight loop.
 */
const RUN_AGAIN_MS = [2_000, 10_000, 30_000];
/**
 * How long the blob store may keep failing a job's input reads before the shot fails (refunded):
 * long enough to wait out an outage, short enough that a bucket gone for good (deleted, revoked
 * credentials) ends the charged job instead of leaving it 'processing' for ever.
 */
const INPUT_READ_GIVE_UP_MS = 10 * 60_000;

export type RunnerOptions = {
  store: Store;
  blobs: BlobStore;
  resolver: ImageResolver;
  provider: ProviderAdapter;
  clock: Clock;
  concurrency: number;
  /**
   * A unit cut by this many crashes (a crash loop) fails instead of running again; in team mode,
   * a job whose worker's lease ran out this many times (its process died each time) fails and is
   * refunded instead of being run again by the next process.
   */
  maxInterruptions?: number;
  unitTimeoutMs?: number;
  /** Pauses between tries of a unit's outcome write when the database went away (tests shorten them). */
  outcomeRetryMs?: readonly number[];
  /** Pauses between tries of a leased run's result write when the blob store failed. */
  leasedBlobWriteRetryMs?: readonly number[];
  /** Pauses before a job whose in-process run gave up runs again (tests shorten them). */
  runAgainMs?: readonly number[];
  /** How long input reads may keep failing before the shot fails (INPUT_READ_GIVE_UP_MS; tests shorten it). */
  inputReadGiveUpMs?: number;
  log?: (message: string) => void;
};

export class JobRunner {
  private readonly limit;
  private readonly active = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  /** Units whose provider call is under way in this process (`jobId\nidx`). */
  private readonly running = new Map<string, { jobId: string; idx: number }>();
  /** In-process runs that gave up: how many times per job, and the timer that runs it again. */
  private readonly failedRuns = new Map<string, number>();
  /**
   * Paid results a failed in-process run could not store, by unit (`jobId\nidx`): the run again
   * here stores them instead of paying the provider for them again. Lost with the process.
   */
  private readonly unstoredResults = new Map<string, ProviderOutput[]>();
  /** Jobs whose run stored a unit: a failed run that made progress starts the count again. */
  private readonly progressed = new Set<string>();
  private readonly runAgainTimers = new Map<string, NodeJS.Timeout>();
  /** Jobs whose pause before running again a drain or stop cancelled: not cut by a crash. */
  private readonly pausedAtStop = new Set<string>();
  /**
   * Jobs whose input reads the blob store keeps failing here: when (performance.now()) the first
   * and the last failure of the streak were seen. A run that gives up releases the job with no
   * lapse counted, so this is what bounds an outage that does not end.
   */
  private readonly inputReadFailures = new Map<string, { firstAt: number; lastAt: number }>();

  constructor(private readonly opts: RunnerOptions) {
    this.limit = pLimit(Math.max(1, opts.concurrency));
  }

  /** Builds what an adapter sees from a stored unit: files on disk, nothing else. */
  providerJob(jobId: string, unit: StoredUnit): ProviderJob {
    const input = (image: StoredImage) => this.opts.resolver.toInput(image);
    return {
      jobId,
      toolId: unit.toolId,
      images: Object.fromEntries(Object.entries(unit.images).map(([k, v]) => [k, v.map(input)])),
      fashionModel: unit.fashionModel && {
        id: unit.fashionModel.id,
        image: input(unit.fashionModel.image),
      },
      venue: unit.venue && { id: unit.venue.id, image: input(unit.venue.image) },
      pose: unit.pose && { id: unit.pose.id, type: unit.pose.type, image: input(unit.pose.image) },
      params: unit.params,
      outputs: unit.outputs,
    };
  }

  /**
   * Providers read files: blobs kept elsewhere (a bucket) are copied to this machine first, and
   * held until the returned function is called (the bounded scratch space keeps held copies).
   */
  private async copyInputsOnce(unit: StoredUnit): Promise<() => void> {
    const named = [
      ...Object.values(unit.images).flat(),
      ...[unit.fashionModel?.image, unit.venue?.image, unit.pose?.image].filter(
        (i) => i !== undefined,
      ),
    ];
    const shas = new Set(named.flatMap((i) => (i.source === 'blob' ? [i.sha256] : [])));
    const copies = await Promise.allSettled([...shas].map((sha) => this.opts.blobs.localCopy(sha)));
    const release = () => {
      for (const c of copies) if (c.status === 'fulfilled') c.value.release();
    };
    const failed = copies.find((c) => c.status === 'rejected');
    if (failed) {
      release();
      const missing = copies.find(
        (c) => c.status === 'rejected' && c.reason instanceof BlobMissing,
      );
      if (missing?.status === 'rejected') throw missing.reason;
      throw new BlobReadFailed(describeFailure(failed.reason), { cause: failed.reason });
    }
    return release;
  }

  /**
   * copyInputsOnce, tried again for a few seconds when the blob store fails (the paid job must
   * not fail for a blip); past that, BlobReadFailed ends the run with the unit pending. An input
   * that is not in the store fails the shot, with a plain reason. Undefined when aborted.
   */
  private async copyInputsHere(
    jobId: string,
    idx: number,
    unit: StoredUnit,
    run: Run,
  ): Promise<(() => void) | undefined> {
    const pauses = this.opts.outcomeRetryMs ?? OUTCOME_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        const release = await this.copyInputsOnce(unit);
        this.inputReadFailures.delete(jobId);
        return release;
      } catch (err) {
        if (run.signal.aborted) return undefined;
        if (err instanceof BlobMissing) {
          this.opts.log?.(`job ${jobId} unit ${idx}: an input is missing (${err.message})`);
          await this.failUnit(jobId, idx, 'an input image is no longer in storage', run);
          return undefined;
        }
        const failingMs = this.inputReadFailing(jobId);
        const pause = pauses[attempt];
        if (pause === undefined) {
          const giveUpMs = this.opts.inputReadGiveUpMs ?? INPUT_READ_GIVE_UP_MS;
          if (failingMs < giveUpMs) throw err;
          // Storage away this long is not a blip: the shot fails (the job refunded) in plain
          // words; the store's own message (bucket, endpoint) stays in the server log.
          this.opts.log?.(
            `job ${jobId} unit ${idx}: its inputs could not be copied for ${Math.round(failingMs / 1000)} s, the blob store failed (${describeFailure(err)}): the shot fails`,
          );
          await this.failUnit(
            jobId,
            idx,
            `an input image could not be read from storage for ${describeDuration(giveUpMs)}`,
            run,
          );
          return undefined;
        }
        this.opts.log?.(
          `job ${jobId} unit ${idx}: copying its inputs failed, the blob store failed (${describeFailure(err)}); trying again in ${pause} ms`,
        );
        await abortableDelay(pause, run.signal);
        if (run.signal.aborted) return undefined;
      }
    }
  }

  /**
   * Records a failed input read of the job and answers how long (ms) its streak of failures has
   * lasted here (kept when the bound fails a shot: the job's other shots fail with it). A streak
   * not seen for 10 minutes is over (the job ended, or ran elsewhere): forgotten.
   */
  private inputReadFailing(jobId: string): number {
    const now = performance.now();
    const staleAfter = Math.max(
      this.opts.inputReadGiveUpMs ?? INPUT_READ_GIVE_UP_MS,
      INPUT_READ_GIVE_UP_MS,
    );
    for (const [id, streak] of this.inputReadFailures)
      if (now - streak.lastAt > staleAfter) this.inputReadFailures.delete(id);
    const streak = this.inputReadFailures.get(jobId) ?? { firstAt: now, lastAt: now };
    streak.lastAt = now;
    this.inputReadFailures.set(jobId, streak);
    return now - streak.firstAt;
  }

  /**
   * Resumes every job a previous process left `processing`. Units that were running when it died
   * count one interruption; a unit at the limit fails (its job finalizes as usual).
   */
  async resumeAll(): Promise<number> {
    const limit = this.opts.maxInterruptions ?? 3;
    await this.opts.store.transaction(async (tx) => {
      for (const cut of await tx.jobs.countInterruptions()) {
        this.opts.log?.(
          `job ${cut.jobId} unit ${cut.idx}: cut by a crash (${cut.interruptions} of ${limit})`,
        );
        if (cut.interruptions >= limit) {
          await tx.jobs.failUnit(
            cut.jobId,
            cut.idx,
            `the shot was cut ${cut.interruptions} times by a service crash`,
          );
        }
      }
    });
    const ids = await this.opts.store.jobs.processingIds();
    if (this.abort.signal.aborted) return 0;
    for (const id of ids) this.enqueue(id);
    return ids.length;
  }

  enqueue(jobId: string): void {
    // Draining: a job created now stays 'processing' and runs at next start. One run of a job at a
    // time, and none while a failed run's pause is under way.
    if (this.active.has(jobId) || this.runAgainTimers.has(jobId)) return;
    if (this.draining || this.abort.signal.aborted) return;
    const failedRuns = this.failedRuns.get(jobId) ?? 0;
    const run = this.runJob(jobId, { signal: this.abort.signal, failedRuns }).then(
      () => {
        this.active.delete(jobId);
        this.failedRuns.delete(jobId);
        this.progressed.delete(jobId);
      },
      (err: unknown) => {
        this.active.delete(jobId);
        // Only runs in a row that stored nothing count towards failing the job.
        this.runAgainLater(jobId, this.progressed.delete(jobId) ? 1 : failedRuns + 1, err);
      },
    );
    this.active.set(jobId, run);
  }

  /**
   * An in-process run that gave up (the store or the blob store failed mid-run: its unit stays
   * pending, nothing is refunded) leaves the job 'processing' with no lease to run out: this
   * process runs it again after a pause, and the run after `maxInterruptions` failed ones in a row
   * that stored nothing fails and refunds it, as a lease-run job is after as many lapses.
   */
  private runAgainLater(jobId: string, failedRuns: number, err: unknown): void {
    const why = `job ${jobId}: run failed (${describeFailure(err)})`;
    if (this.draining || this.abort.signal.aborted) {
      this.pausedAtStop.add(jobId);
      this.opts.log?.(`${why}; it runs again at next start`);
      return;
    }
    const pauses = this.opts.runAgainMs ?? RUN_AGAIN_MS;
    const pause = pauses[Math.min(failedRuns, pauses.length) - 1]!;
    this.failedRuns.set(jobId, failedRuns);
    this.opts.log?.(`${why}; it runs again here in ${pause} ms (failed run ${failedRuns})`);
    const timer = setTimeout(() => {
      this.runAgainTimers.delete(jobId);
      this.enqueue(jobId);
    }, pause);
    this.runAgainTimers.set(jobId, timer);
  }

  private draining = false;

  /**
   * Graceful shutdown, first step: starts no new job and waits up to `ms` for those under way
   * to finish (resolves true if they all did). `stop()` then cuts what is left.
   */
  async drain(ms: number): Promise<boolean> {
    this.draining = true;
    this.cancelRunsAgain();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
    try {
      return await Promise.race([this.idle().then(() => true), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves when no job is running (tests and graceful shutdown). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.allSettled([...this.active.values()]);
  }

  /**
   * Stops taking work and aborts running units, at once; unfinished jobs resume at next start.
   * Their marks are cleared now, so a process killed while it winds down counts nothing either.
   */
  stop(): Promise<void> {
    if (this.abort.signal.aborted) return this.stopped;
    // Queued units see the abort and return at once (p-limit's clearQueue would leave their
    // promises pending forever, and close()'s wait with them).
    this.abort.abort();
    this.cancelRunsAgain();
    const cut = [...this.running.values()];
    this.running.clear();
    // A unit of a failed run keeps its started mark while the job waits to run again: cleared
    // too, or the next start would count a clean stop as a crash.
    const paused = [...this.pausedAtStop];
    this.pausedAtStop.clear();
    this.stopped = this.pendingUnitsOf(paused)
      .then((units) => this.opts.store.jobs.clearUnitsStarted([...cut, ...units]))
      .catch((err: unknown) => this.opts.log?.(`could not clear started marks: ${String(err)}`));
    return this.stopped;
  }

  private stopped: Promise<void> = Promise.resolve();

  /** Jobs waiting to run again stay 'processing' and run at next start. */
  private cancelRunsAgain(): void {
    for (const [jobId, timer] of this.runAgainTimers) {
      clearTimeout(timer);
      this.pausedAtStop.add(jobId);
    }
    this.runAgainTimers.clear();
  }

  private async pendingUnitsOf(jobIds: string[]): Promise<{ jobId: string; idx: number }[]> {
    const units: { jobId: string; idx: number }[] = [];
    for (const jobId of jobIds)
      for (const unit of await this.opts.store.jobs.unitsOf(jobId))
        if (unit.status === 'pending') units.push({ jobId, idx: unit.idx });
    return units;
  }

  /** stop(), then waits for the units under way to return. */
  async close(): Promise<void> {
    await this.stop();
    await Promise.allSettled([...this.active.values()]);
  }

  private now(): Date {
    return this.opts.clock.now();
  }

  /**
   * Runs a job this worker holds a lease on (team mode: the LeaseLoop calls it). Like a job run
   * in-process, except that it returns without writing anything more once `signal` aborts (the
   * lease was lost, or the worker is stopping and releases it), and each unit's outcome is
   * written only while `job.leaseOwner` still holds the lease.
   */
  async runLeased(job: LeasedJob, signal: AbortSignal): Promise<void> {
    const run = this.runJob(job.id, {
      signal: AbortSignal.any([this.abort.signal, signal]),
      leaseOwner: job.leaseOwner,
    });
    this.active.set(job.id, run);
    try {
      await run;
    } finally {
      if (this.active.get(job.id) === run) this.active.delete(job.id);
    }
  }

  private async runJob(jobId: string, run: Run): Promise<void> {
    const { store } = this.opts;
    const job = await store.jobs.get(jobId);
    if (!job || job.status !== 'processing' || run.signal.aborted) return;
    // A job that took down every worker that ran it (e.g. out of memory) must not go on to the next.
    const limit = this.opts.maxInterruptions ?? 3;
    if (run.leaseOwner !== undefined && (job.leaseLapses ?? 0) >= limit) {
      this.opts.log?.(
        `job ${jobId}: its worker stopped without finishing it ${job.leaseLapses} times: failed`,
      );
      return this.finalize(
        jobId,
        run,
        `the job was cut ${job.leaseLapses} times: the service process running it stopped (or lost its database) each time`,
      );
    }
    // Nor one whose runs here keep giving up with nothing stored: refunded, not tried for ever.
    if (run.leaseOwner === undefined && (run.failedRuns ?? 0) >= limit) {
      this.opts.log?.(`job ${jobId}: its run failed ${run.failedRuns} times: failed`);
      return this.finalize(
        jobId,
        run,
        `the job was cut ${run.failedRuns} times: the service's database or file storage failed each time`,
      );
    }
    const parsed = JobInputSchema.safeParse(JSON.parse(job.input));
    if (!parsed.success) return this.finalize(jobId, run, 'the job record is unreadable');
    const pending = (await store.jobs.unitsOf(jobId)).filter((u) => u.status === 'pending');
    // A unit that ends the run (its result could not be stored) must not end it while the other
    // units' provider calls are under way: the job would be released and run again elsewhere
    // with those calls still paid for here. Every unit settles first; units not yet started
    // when one failed are not started (they stay pending for the next run).
    let runFailed = false;
    const settled = await Promise.allSettled(
      pending.map((unit) =>
        this.limit(async () => {
          if (run.signal.aborted || runFailed) return;
          const stored = parsed.data.units[unit.idx];
          try {
            if (!stored) return await this.failUnit(jobId, unit.idx, 'unknown shot', run);
            await this.runUnit(jobId, unit.idx, stored, run);
          } catch (err) {
            runFailed = true;
            throw err;
          }
        }),
      ),
    );
    const failure = settled.find((s) => s.status === 'rejected');
    if (failure) throw failure.reason;
    if (!run.signal.aborted) await this.finalize(jobId, run);
  }

  private async runUnit(jobId: string, idx: number, unit: StoredUnit, run: Run): Promise<void> {
    const signal = AbortSignal.any([
      run.signal,
      AbortSignal.timeout(this.opts.unitTimeoutMs ?? 10 * 60_000),
    ]);
    const slot = `${jobId}\n${idx}`;
    // The started mark counts crashes at the next start of a one-process store; under a lease a
    // crash is counted by the lease running out instead (claim's leaseLapses), so no write here.
    if (run.leaseOwner === undefined) {
      this.running.set(slot, { jobId, idx });
      await this.opts.store.jobs.markUnitStarted(jobId, idx, this.now().toISOString());
    }
    try {
      let outputs: ProviderOutput[];
      const unstored = run.leaseOwner === undefined ? this.unstoredResults.get(slot) : undefined;
      if (unstored) {
        this.opts.log?.(`job ${jobId} unit ${idx}: storing the result paid for in a failed run`);
        await this.writeOutcome(jobId, idx, unstored, run);
        return;
      }
      // Outside the try below: a blob store that failed says nothing about the shot.
      const release = await this.copyInputsHere(jobId, idx, unit, run);
      if (!release) return;
      try {
        try {
          outputs = await this.opts.provider.run(this.providerJob(jobId, unit), { signal });
        } finally {
          release();
        }
        // Shutting down (the unit resumes at next start, or on another process) or lease lost.
        if (run.signal.aborted) return;
        if (outputs.length === 0 || outputs.some((o) => o.data.length === 0)) {
          throw new Error('the provider returned no usable output');
        }
      } catch (err) {
        if (run.signal.aborted) return;
        // A database error while recording the failure ends the run: the unit stays pending.
        await this.failUnit(jobId, idx, describeFailure(err), run);
        return;
      }
      await this.writeOutcome(jobId, idx, outputs, run);
    } finally {
      this.running.delete(slot);
    }
  }

  /**
   * Stores a unit's outputs and marks it completed, in one transaction. The outputs were paid
   * for: when the database goes away or the blob store fails meanwhile, the write is tried again
   * a few times before the run gives up (then the unit stays pending and is run again, elsewhere
   * or later; never failed nor refunded for it). Tried again
   * after a commit whose answer was lost, the unit is no longer pending and nothing is written.
   */
  private async writeOutcome(
    jobId: string,
    idx: number,
    outputs: ProviderOutput[],
    run: Run,
  ): Promise<void> {
    const pauses = this.opts.outcomeRetryMs ?? OUTCOME_RETRY_MS;
    const blobPauses =
      run.leaseOwner === undefined
        ? pauses
        : (this.opts.leasedBlobWriteRetryMs ?? LEASED_BLOB_WRITE_RETRY_MS);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.writeOutcomeOnce(jobId, idx, outputs, run);
        this.unstoredResults.delete(`${jobId}\n${idx}`);
        if (run.leaseOwner === undefined) this.progressed.add(jobId);
        return;
      } catch (err) {
        if (run.signal.aborted || err instanceof LeaseNotHeld) return;
        const blobFailed = err instanceof BlobWriteFailed;
        if (!blobFailed && !isStoreUnavailable(err)) {
          this.unstoredResults.delete(`${jobId}\n${idx}`);
          await this.failUnit(jobId, idx, describeFailure(err), run);
          return;
        }
        const pause = (blobFailed ? blobPauses : pauses)[attempt];
        if (pause === undefined) {
          // Given up: in-process, the next run here stores these outputs (paid for already).
          if (run.leaseOwner === undefined) this.unstoredResults.set(`${jobId}\n${idx}`, outputs);
          throw err;
        }
        const where = blobFailed ? 'the blob store failed' : 'the database went away';
        this.opts.log?.(
          `job ${jobId} unit ${idx}: storing its result failed, ${where} (${describeFailure(err)}); trying again in ${pause} ms`,
        );
        await abortableDelay(pause, run.signal);
        if (run.signal.aborted) return;
      }
    }
  }

  private async writeOutcomeOnce(
    jobId: string,
    idx: number,
    outputs: ProviderOutput[],
    run: Run,
  ): Promise<void> {
    const { store, blobs } = this.opts;
    const shas = await Promise.all(outputs.map((o) => blobs.writeFile(o.data))).catch(
      (err: unknown) => {
        throw new BlobWriteFailed(describeFailure(err), { cause: err });
      },
    );
    await store.transaction(async (tx) => {
      const blobIds: string[] = [];
      for (const [n, o] of outputs.entries()) {
        blobIds.push(
          await recordBlob(
            tx,
            {
              sha256: shas[n]!,
              mime: o.mime,
              size: o.data.length,
              origin: 'result',
              accountId: null,
            },
            this.now(),
          ),
        );
      }
      if (!(await tx.jobs.completeUnit(jobId, idx, blobIds, run.leaseOwner)) && run.leaseOwner)
        throw new LeaseNotHeld(`job ${jobId}: lease lost before unit ${idx} was written`);
      const cost = outputs.reduce<number | null>(
        (sum, o) => (o.costUsd === undefined ? sum : (sum ?? 0) + o.costUsd),
        null,
      );
      await tx.jobs.recordProviderCost(jobId, outputs[0]?.source ?? this.opts.provider.name, cost);
    });
  }

  private async failUnit(jobId: string, idx: number, message: string, run: Run): Promise<void> {
    await this.opts.store.jobs.failUnit(jobId, idx, message, run.leaseOwner);
  }

  /**
   * Ends the job: completed if any unit succeeded, otherwise failed and refunded in full, in one
   * transaction. `forcedError` fails every pending unit first.
   */
  private async finalize(jobId: string, run: Run, forcedError?: string): Promise<void> {
    if (forcedError)
      for (const slot of this.unstoredResults.keys())
        if (slot.startsWith(`${jobId}\n`)) this.unstoredResults.delete(slot);
    await this.opts.store.transaction(async (tx) => {
      if (forcedError)
        for (const u of await tx.jobs.unitsOf(jobId))
          await tx.jobs.failUnit(jobId, u.idx, forcedError, run.leaseOwner);
      const units = await tx.jobs.unitsOf(jobId);
      if (units.some((u) => u.status === 'pending')) return;
      const now = this.now();
      if (units.some((u) => u.status === 'completed')) {
        await tx.jobs.finish(jobId, 'completed', null, now.toISOString());
        return;
      }
      const message = failureMessage(units);
      if (await tx.jobs.finish(jobId, 'failed', message, now.toISOString()))
        await refund(tx, jobId, now, message);
    });
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function failureMessage(units: UnitRow[]): string {
  const reasons = [...new Set(units.map((u) => u.errorMessage ?? 'unknown error'))];
  return units.length === 1 ? reasons[0]! : `every shot failed: ${reasons.join('; ')}`;
}

/** "10 minutes", "1 minute", "45 seconds": a bound in the customer's job message. */
function describeDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes >= 1) return minutes === 1 ? '1 minute' : `${minutes} minutes`;
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

function describeFailure(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return 'the generation timed out';
    return err.message || err.name;
  }
  return 'the generation failed';
}

/**
 * Used by the service for the spec's "failure after the deduction": fails the job and refunds its
 * charge once, with `alsoDo` in the same transaction. Returns the diamonds refunded.
 */
export function failAndRefund(
  store: Store,
  jobId: string,
  message: string,
  now: Date,
  alsoDo: (tx: Store) => Promise<void> = async () => {},
): Promise<number> {
  return store.transaction(async (tx) => {
    for (const u of await tx.jobs.unitsOf(jobId)) await tx.jobs.failUnit(jobId, u.idx, message);
    const refunded = (await tx.jobs.finish(jobId, 'failed', message, now.toISOString()))
      ? await refund(tx, jobId, now, message)
      : 0;
    await alsoDo(tx);
    return refunded;
  });
}
