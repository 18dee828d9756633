/**
 * A result file not written yet, answered 202 {success: true, status: 'processing'} instead of an
 * object store's 404, was refused as "not an image" after two tries and the paid photo held for
 * the next run, while the 404 form is waited on within the run (review rev27 D6). A 202 (or 204)
 * is "not ready yet", asked again over the same window. Against the reference /v1 service
 * (written from the spec alone, `resultFilesNotYetAs: '202'`) on loopback, through `run`'s path.
 */
import { afterEach, expect, it } from 'vitest';
import { referenceWorld, runOnWorld, stopAfter } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'files-202@ref.test';

it('result files answering 202 for 3 s after the job completed are asked again and collected in the same run', async () => {
  const w = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: {
      seed: 7,
      timeScale: 0.01,
      jobSeconds: [50, 100],
      resultFilesNotYetMs: 3_000,
      resultFilesNotYetAs: '202',
    },
    photos: 2,
  });
  const summary = await runOnWorld(w, {
    concurrency: 4,
    backoff: { baseMs: 100, maxMs: 400 },
    signal: stopAfter(cleanups, 40_000),
  });
  expect(summary.interrupted).toBeUndefined();
  // Before: each held 'paid …; … it is JSON (… served as application/json)', 0 exported.
  expect(summary.held).toEqual([]);
  expect(summary.failed).toEqual([]);
  expect(summary.exported).toBe(2);
  expect(w.service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(2);
  expect(w.service.resultRequests().filter((r) => r.status === 202).length).toBeGreaterThan(0);
}, 60_000);
