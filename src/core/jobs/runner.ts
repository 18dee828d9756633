/**
 * Runs jobs in the background with bounded concurrency. Every unit's outcome is written in one
 * transaction; a job leaves `processing` exactly once, and a job that ends failed is refunded in
 * the same transaction (the ledger's unique index makes a second refund impossible). At start,
 * jobs left `processing` are resumed: every unfinished unit runs (again). Only a unit a crash cut
 * while it ran counts as interrupted; queued units and a clean shutdown count nothing.
 */
import pLimit from 'p-limit';
import type { WritableDB } from '../db/types';
import type { Clock } from '../clock';
import type { BlobStore } from '../media/blob-store';
import type { ImageResolver, StoredImage } from '../media/resolve';
import type { ProviderAdapter, ProviderJob } from '../providers/types';
import { refund } from '../ledger';
import { newId } from '../ids';
import { JobInputSchema, type StoredUnit } from './job-input';
import * as store from './job-store';

export type RunnerOptions = {
  db: WritableDB;
  blobs: BlobStore;
  resolver: ImageResolver;
  provider: ProviderAdapter;
  clock: Clock;
  concurrency: number;
  /** A unit cut by this many crashes (a crash loop) fails instead of running again. */
  maxInterruptions?: number;
  unitTimeoutMs?: number;
  log?: (message: string) => void;
};

export class JobRunner {
  private readonly limit;
  private readonly active = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  /** Units whose provider call is under way in this process (`jobId\nidx`). */
  private readonly running = new Map<string, { jobId: string; idx: number }>();

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
      fashionModel: unit.fashionModel && { id: unit.fashionModel.id, image: input(unit.fashionModel.image) },
      venue: unit.venue && { id: unit.venue.id, image: input(unit.venue.image) },
      pose: unit.pose && { id: unit.pose.id, type: unit.pose.type, image: input(unit.pose.image) },
      params: unit.params,
      outputs: unit.outputs,
    };
  }

  /** Providers read files: blobs kept elsewhere (a bucket) are copied to this machine first. */
  private async copyInputsHere(unit: StoredUnit): Promise<void> {
    const named = [
      ...Object.values(unit.images).flat(),
      ...[unit.fashionModel?.image, unit.venue?.image, unit.pose?.image].filter((i) => i !== undefined),
    ];
    const shas = new Set(named.flatMap((i) => (i.source === 'blob' ? [i.sha256] : [])));
    await Promise.all([...shas].map((sha) => this.opts.blobs.localCopy(sha)));
  }

  /**
   * Resumes every job a previous process left `processing`. Units that were running when it died
   * count one interruption; a unit at the limit fails (its job finalizes as usual).
   */
  resumeAll(): number {
    const { db } = this.opts;
    const limit = this.opts.maxInterruptions ?? 3;
    db.transaction(() => {
      for (const cut of store.countInterruptions(db)) {
        this.opts.log?.(`job ${cut.jobId} unit ${cut.idx}: cut by a crash (${cut.interruptions} of ${limit})`);
        if (cut.interruptions >= limit) {
          store.failUnit(db, cut.jobId, cut.idx, `the shot was cut ${cut.interruptions} times by a service crash`);
        }
      }
    }).immediate();
    const ids = store.processingJobIds(db);
    for (const id of ids) this.enqueue(id);
    return ids.length;
  }

  enqueue(jobId: string): void {
    if (this.active.has(jobId)) return;
    const run = this.runJob(jobId)
      .catch((err: unknown) => this.opts.log?.(`job ${jobId}: runner error ${String(err)}`))
      .finally(() => this.active.delete(jobId));
    this.active.set(jobId, run);
  }

  /** Resolves when no job is running (tests and graceful shutdown). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.allSettled([...this.active.values()]);
  }

  /**
   * Stops taking work and aborts running units, at once; unfinished jobs resume at next start.
   * Their marks are cleared now, so a process killed while it winds down counts nothing either.
   */
  stop(): void {
    if (this.abort.signal.aborted) return;
    // Queued units see the abort and return at once (p-limit's clearQueue would leave their
    // promises pending forever, and close()'s wait with them).
    this.abort.abort();
    this.opts.db.transaction(() => store.clearUnitsStarted(this.opts.db, [...this.running.values()])).immediate();
    this.running.clear();
  }

  /** stop(), then waits for the units under way to return. */
  async close(): Promise<void> {
    this.stop();
    await Promise.allSettled([...this.active.values()]);
  }

  private now(): Date {
    return this.opts.clock.now();
  }

  private async runJob(jobId: string): Promise<void> {
    const { db } = this.opts;
    const job = store.getJob(db, jobId);
    if (!job || job.status !== 'processing') return;
    const parsed = JobInputSchema.safeParse(JSON.parse(job.input));
    if (!parsed.success) return this.finalize(jobId, 'the job record is unreadable');
    const pending = store.unitsOf(db, jobId).filter((u) => u.status === 'pending');
    await Promise.all(
      pending.map((unit) =>
        this.limit(async () => {
          if (this.abort.signal.aborted) return;
          const stored = parsed.data.units[unit.idx];
          if (!stored) return this.failUnit(jobId, unit.idx, 'unknown shot');
          await this.runUnit(jobId, unit.idx, stored);
        }),
      ),
    );
    if (!this.abort.signal.aborted) this.finalize(jobId);
  }

  private async runUnit(jobId: string, idx: number, unit: StoredUnit): Promise<void> {
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.opts.unitTimeoutMs ?? 10 * 60_000)]);
    const slot = `${jobId}\n${idx}`;
    store.markUnitStarted(this.opts.db, jobId, idx, this.now());
    this.running.set(slot, { jobId, idx });
    try {
      await this.copyInputsHere(unit);
      const outputs = await this.opts.provider.run(this.providerJob(jobId, unit), { signal });
      if (this.abort.signal.aborted) return; // shutting down: resume this unit at next start
      if (outputs.length === 0 || outputs.some((o) => o.data.length === 0)) {
        throw new Error('the provider returned no usable output');
      }
      const { db, blobs } = this.opts;
      const shas = await Promise.all(outputs.map((o) => blobs.writeFile(o.data)));
      db.transaction(() => {
        const blobIds = outputs.map((o, n) => {
          const id = newId('r');
          db.prepare(
            "INSERT INTO blobs (id, sha256, mime, size, account_id, origin, created_at) VALUES (?, ?, ?, ?, NULL, 'result', ?)",
          ).run(id, shas[n], o.mime, o.data.length, this.now().toISOString());
          return id;
        });
        store.completeUnit(db, jobId, idx, blobIds);
        const cost = outputs.reduce<number | null>((sum, o) => (o.costUsd === undefined ? sum : (sum ?? 0) + o.costUsd), null);
        store.recordProviderCost(db, jobId, outputs[0]?.source ?? this.opts.provider.name, cost);
      }).immediate();
    } catch (err) {
      if (this.abort.signal.aborted) return;
      this.failUnit(jobId, idx, describeFailure(err));
    } finally {
      this.running.delete(slot);
    }
  }

  private failUnit(jobId: string, idx: number, message: string): void {
    this.opts.db.transaction(() => store.failUnit(this.opts.db, jobId, idx, message)).immediate();
  }

  /**
   * Ends the job: completed if any unit succeeded, otherwise failed and refunded in full, in one
   * transaction. `forcedError` fails every pending unit first.
   */
  private finalize(jobId: string, forcedError?: string): void {
    const { db } = this.opts;
    db.transaction(() => {
      if (forcedError) for (const u of store.unitsOf(db, jobId)) store.failUnit(db, jobId, u.idx, forcedError);
      const units = store.unitsOf(db, jobId);
      if (units.some((u) => u.status === 'pending')) return;
      const succeeded = units.some((u) => u.status === 'completed');
      if (succeeded) {
        store.finishJob(db, jobId, 'completed', null, this.now());
        return;
      }
      const message = failureMessage(units);
      if (store.finishJob(db, jobId, 'failed', message, this.now())) {
        refund(db, jobId, this.now(), message);
      }
    }).immediate();
  }
}

function failureMessage(units: store.UnitRow[]): string {
  const reasons = [...new Set(units.map((u) => u.errorMessage ?? 'unknown error'))];
  return units.length === 1 ? reasons[0]! : `every shot failed: ${reasons.join('; ')}`;
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
export function failAndRefund(db: WritableDB, jobId: string, message: string, now: Date, alsoDo: () => void = () => {}): number {
  return db.transaction(() => {
    for (const u of store.unitsOf(db, jobId)) store.failUnit(db, jobId, u.idx, message);
    const refunded = store.finishJob(db, jobId, 'failed', message, now) ? refund(db, jobId, now, message) : 0;
    alsoDo();
    return refunded;
  }).immediate();
}
