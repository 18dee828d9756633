/**
 * Provider adapters for tests: the real local provider, wrapped to add delays or failures. The
 * service under test is not mocked; only the AI backend seam is steered, as the spec's failure
 * paths (failure after the charge, failed shots) cannot be provoked otherwise.
 */
import { loadCatalog } from '../../../src/core/catalog';
import { createLocalProvider } from '../../../src/core/providers/local';
import type { ProviderAdapter, ProviderJob } from '../../../src/core/providers/types';

export function localProvider(): ProviderAdapter {
  return createLocalProvider({ catalog: loadCatalog() });
}

const wait = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new Error('aborted'));
    });
  });

/** Local provider whose start() always throws: the spec's "failure after the deduction" (500). */
export function failingStartProvider(): ProviderAdapter {
  const inner = localProvider();
  return {
    name: 'test-failing-start',
    async start() {
      throw new Error('backend rejected the job at start');
    },
    run: (job, ctx) => inner.run(job, ctx),
  };
}

/** Local provider that waits `ms` before each run (keeps jobs in `processing` for a while). */
export function delayedProvider(ms: number): ProviderAdapter & { calls: ProviderJob[] } {
  const inner = localProvider();
  const calls: ProviderJob[] = [];
  return {
    name: 'test-delayed',
    calls,
    ...(inner.start ? { start: (job: ProviderJob) => inner.start!(job) } : {}),
    async run(job, ctx) {
      calls.push(job);
      await wait(ms, ctx.signal);
      return inner.run(job, ctx);
    },
  };
}

/**
 * Local provider whose run() throws when `shouldFail` says so; `n` counts run() calls per job id
 * (0-based), so `(job, n) => n === 0` fails exactly the first shot of every job.
 */
export function flakyProvider(
  shouldFail: (job: ProviderJob, n: number) => boolean,
  delayMs = 0,
): ProviderAdapter {
  const inner = localProvider();
  const perJob = new Map<string, number>();
  return {
    name: 'test-flaky',
    ...(inner.start ? { start: (job: ProviderJob) => inner.start!(job) } : {}),
    async run(job, ctx) {
      const n = perJob.get(job.jobId) ?? 0;
      perJob.set(job.jobId, n + 1);
      if (delayMs > 0) await wait(delayMs, ctx.signal);
      if (shouldFail(job, n)) throw new Error(`simulated backend failure on call ${n}`);
      return inner.run(job, ctx);
    },
  };
}
