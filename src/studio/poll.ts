/**
 * Adaptive polling: the first poll waits for the tool's typical job time, later polls back off,
 * so a single-image job costs few requests against the daily cap.
 */
import type { ServiceClient } from '../client';
import type { GenerationBody } from '../shared/api';
import { EMPTY_ANSWERS_HELD_AT, jobOutcome, PARTIAL_ANSWERS_COLLECTED_AT } from './poller';

export type PollOptions = {
  firstDelayMs: number;
  maxDelayMs?: number;
  factor?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (job: Omit<GenerationBody, 'success'>) => void;
};

/**
 * Typical local job times of a job group (`jobGroup`: a tool id, 'look' or 'ready_shoot'); remote
 * providers are slower, and backoff covers the difference.
 */
export function typicalJobMs(group: string): number {
  if (group === 'ai_videos') return 4000;
  if (group.endsWith('_pack') || group === 'ready_shoot') return 2500;
  return 800;
}

/** Polls a job of this group usually needs with the schedule above (for budget estimates). */
export function typicalPollRequests(group: string): number {
  return group === 'ai_videos' || group === 'ready_shoot' || group.endsWith('_pack') ? 3 : 2;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });

/** The longest gap between polls of one job (it grows with the job's age up to this). */
const MAX_GAP_MS = 15 * 60_000;

/**
 * Polls until the service gives its final word (`jobOutcome`): a status it does not show is a job
 * still running, a failure comes back as `failed`, and `completed` with no results is asked again
 * a few times before it throws (paid without results, never taken as refunded).
 */
export async function pollUntilDone(
  client: ServiceClient,
  jobId: string,
  opts: PollOptions,
): Promise<Omit<GenerationBody, 'success'>> {
  const started = Date.now();
  let delay = opts.firstDelayMs;
  let empty = 0;
  let partial = 0;
  /** Shots seen completed: a failed job's final answer may drop its counters. */
  let completedSeen = 0;
  for (;;) {
    await sleep(delay, opts.signal);
    const job = await client.getGeneration(jobId);
    opts.onProgress?.(job);
    const outcome = jobOutcome(job, null, completedSeen);
    completedSeen = Math.max(completedSeen, job.packCompleted ?? 0);
    if (outcome.kind === 'delivered') return job;
    if (outcome.kind === 'failed') return { ...job, status: 'failed' };
    if (outcome.kind === 'empty' && ++empty >= EMPTY_ANSWERS_HELD_AT)
      throw new Error(`job ${jobId}: paid without results: ${outcome.message}`);
    // Results lagging behind the counters: asked again, then what is listed is returned.
    if (outcome.kind === 'partial' && ++partial >= PARTIAL_ANSWERS_COLLECTED_AT) return job;
    if (outcome.kind === 'running') empty = partial = 0;
    const age = Date.now() - started;
    if (opts.timeoutMs !== undefined && age > opts.timeoutMs) {
      throw new Error(
        `job ${jobId} is still processing after ${Math.round(opts.timeoutMs / 1000)} s`,
      );
    }
    const backoff = Math.min(opts.maxDelayMs ?? 5000, Math.max(250, delay * (opts.factor ?? 1.6)));
    // Never closer than a quarter of the job's age: a stuck job does not eat the daily cap.
    delay = Math.min(MAX_GAP_MS, Math.max(backoff, age / 4));
  }
}
