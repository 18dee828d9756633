/**
 * A 429's words outrank its Retry-After where they are plain: the spec's daily-cap form ("Request
 * limit of N reached for this API key") closes the day though a short Retry-After comes with it
 * (rev15 Q1). Against the reference /v1 service (written from the spec alone) on loopback, through
 * `run`'s own path (HttpClient, StudioEngine, runBatch), each run stopped after 45 s if not ended.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  chargedTo,
  expectEveryPhotoPaidOnce,
  referenceWorld,
  runOnWorld,
  stopAfter,
} from './helpers/reference-studio';
import { rewritingFront } from './helpers/rewriting-front';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'words-over-retry-after@ref.test';

/**
 * A pass-through in front of the service that adds `Retry-After: <seconds>` to every 429 (the
 * spec names no such header; a gateway or framework often adds one to any 429).
 */
const withRetryAfterOn429 = (target: string, seconds: string) =>
  rewritingFront(cleanups, target, (_, answer) =>
    answer.status === 429
      ? { ...answer, headers: { ...answer.headers, 'retry-after': seconds } }
      : answer,
  );

describe("a 429's plain words outrank its Retry-After", () => {
  it("the spec's daily-cap 429 with 'Retry-After: 5' closes the day: the run ends saying so, the capped key is not asked every 5 s", async () => {
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: {
        seed: 6,
        timeScale: 0.01,
        jobSeconds: [20, 30],
        dailyCapMessage: 'Request limit of 12 reached for this API key',
      },
      photos: 4,
    });
    // The account's cap: 12 requests a day (referenceWorld opens it at the default).
    world.apiKey = world.service.createAccount({
      email: `capped-${EMAIL}`,
      diamonds: 100,
      dailyCap: 12,
    }).apiKey;
    const baseUrl = await withRetryAfterOn429(world.service.url, '5');
    const summary = await runOnWorld(world, {
      baseUrl,
      backoff: { baseMs: 1000, maxMs: 60_000 },
      signal: stopAfter(cleanups, 45_000),
    });
    // Before: read as a rate limit, asked every ~5 s until stopped (interrupted).
    expect(summary.interrupted).toBeUndefined();
    expect(summary.notices).toContainEqual(
      expect.stringContaining(
        'daily request cap reached (Request limit of 12 reached for this API key)',
      ),
    );
    // Requests sent into the closed day: those already on their way, not one every 5 s.
    expect(world.service.requestsToday(world.apiKey) - 12).toBeLessThanOrEqual(3);
  }, 90_000);
});

describe('words of jobs at once keep a long Retry-After a wait on jobs at once', () => {
  it("create 429 'Too many concurrent jobs' with Retry-After 3600: paid jobs collected, creates sent again as jobs end, the day left open (rev15 J3)", async () => {
    const photos = 6;
    // Jobs of 1-1.5 s: four photos at once meet the limit of 2 on every wave.
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: {
        seed: 9,
        timeScale: 0.01,
        jobSeconds: [100, 150],
        jobsAtOnce: {
          limit: 2,
          status: 429,
          message: 'Too many concurrent jobs',
          retryAfterSeconds: 3600,
        },
      },
      photos,
    });
    const summary = await runOnWorld(world, {
      concurrency: 4,
      backoff: { baseMs: 1000, maxMs: 60_000 },
      signal: stopAfter(cleanups, 60_000),
    });
    const refused = world.service
      .requests()
      .filter((r) => r.method === 'POST' && r.path === '/v1/generations' && r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    // Before: the day closed after a dozen requests, 2 paid jobs left for tomorrow, 4 not started.
    expectEveryPhotoPaidOnce(summary, world.service, EMAIL, photos);
    expect(summary.notices?.some((n) => n.includes('daily request cap'))).toBe(false);
  }, 90_000);
});
