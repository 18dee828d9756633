/**
 * Adaptive polling: the first poll waits for the tool's typical job time, later polls back off,
 * so a single-image job costs few requests against the daily cap.
 */
import type { ServiceClient } from '../client';
import type { GenerationBody } from '../shared/api';

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

export async function pollUntilDone(
  client: ServiceClient,
  jobId: string,
  opts: PollOptions,
): Promise<Omit<GenerationBody, 'success'>> {
  const started = Date.now();
  let delay = opts.firstDelayMs;
  for (;;) {
    await sleep(delay, opts.signal);
    const job = await client.getGeneration(jobId);
    opts.onProgress?.(job);
    if (job.status !== 'processing') return job;
    if (opts.timeoutMs !== undefined && Date.now() - started > opts.timeoutMs) {
      throw new Error(
        `job ${jobId} is still processing after ${Math.round(opts.timeoutMs / 1000)} s`,
      );
    }
    delay = Math.min(opts.maxDelayMs ?? 5000, Math.max(250, delay * (opts.factor ?? 1.6)));
  }
}
