/**
 * A service that limits jobs at once may refuse a create with 409 or 503 in words that name that
 * limit ("Too many jobs in progress"; spec §8: concurrent jobs "not shown"). Nothing was charged:
 * `run` waits until a job ends, as for a concurrency 429, and every photo is delivered, each paid
 * once. Against the reference /v1 service (written from the spec alone) on loopback, through
 * `run`'s own path (HttpClient, StudioEngine, runBatch); each run stopped after 60 s if not ended.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ReferenceServiceOptions } from '../reference-service';
import {
  chargedTo,
  expectEveryPhotoPaidOnce,
  referenceWorld,
  runOnWorld,
  stopAfter,
} from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'jobs-at-once@ref.test';
const PHOTOS = 6;

async function runAgainst(options: ReferenceServiceOptions) {
  // Jobs of 1-1.5 s: four photos at once meet the limit of 2 on every wave.
  const world = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 9, timeScale: 0.01, jobSeconds: [100, 150], ...options },
    photos: PHOTOS,
  });
  const summary = await runOnWorld(world, {
    concurrency: 4,
    // The engine's own back-off (1 s doubling to 1 min): the waits under test are its own.
    backoff: { baseMs: 1000, maxMs: 60_000 },
    signal: stopAfter(cleanups, 60_000),
  });
  const { service } = world;
  const creates = service
    .requests()
    .filter(
      (r) =>
        r.method === 'POST' && r.path === '/v1/generations' && r.status !== null && r.status >= 400,
    );
  return { summary, service, creates };
}

describe('a create refused for the jobs at once is waited out, not failed', () => {
  it.each([
    { status: 409, message: 'Too many jobs in progress' },
    {
      status: 503,
      message: 'Service busy: 2 jobs already running for this account, wait for one to finish',
    },
  ])(
    '$status "$message": every photo exported, each paid once',
    async ({ status, message }) => {
      const { summary, service, creates } = await runAgainst({
        jobsAtOnce: { limit: 2, status, message },
      });
      // The limit was met (the test proves something) and never read as a failure.
      expect(creates.filter((r) => r.status === status).length).toBeGreaterThan(0);
      expect(summary.interrupted).toBeUndefined();
      expect(summary.failed).toEqual([]);
      expect(summary.uncertain).toEqual([]);
      expect(summary.exported).toBe(PHOTOS);
      // Each photo charged once: one job per photo, and the run's spend is the service's.
      const jobs = service.jobs(EMAIL);
      expect(jobs).toHaveLength(PHOTOS);
      expect(chargedTo(service, EMAIL)).toBe(PHOTOS);
      expect(summary.diamondsSpent).toBe(PHOTOS);
    },
    90_000,
  );

  it('a bare 429 "Too Many Requests" with Retry-After 900 is no daily cap: paid jobs collected, creates sent again once a job ends (rev14 J1)', async () => {
    const { summary, service, creates } = await runAgainst({
      jobsAtOnce: { limit: 2, status: 429, message: 'Too Many Requests', retryAfterSeconds: 900 },
    });
    expect(creates.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    // Before: the day closed after a dozen requests, 2 paid jobs left for tomorrow, 4 not started.
    expectEveryPhotoPaidOnce(summary, service, EMAIL, PHOTOS);
    expect(summary.uncertain).toEqual([]);
    // At most one refusal more per job ended, not one per photo per poll round.
    expect(creates.filter((r) => r.status === 429).length).toBeLessThanOrEqual(2 * PHOTOS);
  }, 90_000);

  it('a 409 in other words on a first submission still fails the photo (nothing waits on it for ever)', async () => {
    const { summary } = await runAgainst({
      jobsAtOnce: { limit: 2, status: 409, message: 'Conflict: this request cannot be processed' },
    });
    expect(summary.exported).toBeLessThan(PHOTOS);
    expect(summary.failed.some((f) => f.reason.includes('Conflict'))).toBe(true);
  }, 90_000);
});
