/**
 * Runs jobs in the background with bounded concurrency. Every unit's outcome is written in one
 * transaction; a job leaves `processing` exactly once, and a job that ends failed is refunded in
 * the same transaction (the ledger's unique index makes a second refund impossible). At start,
 * jobs left `processing` by a crash are resumed from their first unfinished unit.
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
  /** A job interrupted this many times (crash loops) fails with a refund instead of retrying. */
  maxAttempts?: number;
  unitTimeoutMs?: number;
  log?: (message: string) => void;
};

export class JobRunner {
  private readonly limit;
  private readonly active = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();

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

  /** Resumes every job a previous process left `processing`. */
  resumeAll(): number {
    const ids = store.processingJobIds(this.opts.db);
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

  /** Stops taking work and aborts running units; unfinished jobs resume at next start. */
  async close(): Promise<void> {
    // Queued units see the abort and return at once (p-limit's clearQueue would leave their
    // promises pending forever, and this wait with them).
    this.abort.abort();
    await Promise.allSettled([...this.active.values()]);
  }

  private now(): Date {
    return this.opts.clock.now();
  }

  private async runJob(jobId: string): Promise<void> {
    const { db } = this.opts;
    const job = store.getJob(db, jobId);
    if (!job || job.status !== 'processing') return;
    const attempts = store.incrementAttempts(db, jobId);
    const parsed = JobInputSchema.safeParse(JSON.parse(job.input));
    if (!parsed.success) return this.finalize(jobId, 'the job record is unreadable');
    if (attempts > (this.opts.maxAttempts ?? 3)) {
      return this.finalize(jobId, 'the job was interrupted too many times');
    }
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
    try {
      const outputs = await this.opts.provider.run(this.providerJob(jobId, unit), { signal });
      if (this.abort.signal.aborted) return; // shutting down: resume this unit at next start
      if (outputs.length === 0 || outputs.some((o) => o.data.length === 0)) {
        throw new Error('the provider returned no usable output');
      }
      const { db, blobs } = this.opts;
      const shas = outputs.map((o) => blobs.writeFile(o.data));
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

/** Used by the service for the spec's "failure after the deduction". */
export function failAndRefund(db: WritableDB, jobId: string, message: string, now: Date): void {
  db.transaction(() => {
    for (const u of store.unitsOf(db, jobId)) store.failUnit(db, jobId, u.idx, message);
    if (store.finishJob(db, jobId, 'failed', message, now)) refund(db, jobId, now, message);
  }).immediate();
}
