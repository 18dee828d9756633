/**
 * A 429's Retry-After of '0' (RFC 9110 allows it) or a malformed '-1' / '0.5' (V8's Date.parse
 * reads them as dates in 2001 and 2000) is never obeyed as "now": every refusal waits at least a
 * bare 429's back-off, doubling while refused in a row, so refused requests cannot burn the day's
 * request cap (rev15 J2: ~480 refused creates in 4-11 s, the whole 500 gone, 2 paid jobs left for
 * the next day). Against the reference /v1 service (written from the spec alone) on loopback,
 * through `run`'s own path (HttpClient, StudioEngine, runBatch); each run stopped after 60 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultProxy } from '../reference-service/fault-proxy';
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

const EMAIL = 'retry-after-floor@ref.test';
const PHOTOS = 6;

describe("a 429's Retry-After of 0 or malformed waits at least the back-off", () => {
  it.each(['0', '-1', '0.5'])(
    "create refused 429 'Too Many Requests' (2 jobs at once), Retry-After '%s': every photo exported, refusals bounded",
    async (retryAfterRaw) => {
      // Jobs of 5-6 s: four photos at once meet the limit of 2 on every wave.
      const world = await referenceWorld(cleanups, {
        email: EMAIL,
        diamonds: 100,
        service: {
          seed: 9,
          timeScale: 0.01,
          jobSeconds: [500, 600],
          jobsAtOnce: { limit: 2, status: 429, message: 'Too Many Requests', retryAfterRaw },
        },
        photos: PHOTOS,
      });
      const summary = await runOnWorld(world, {
        concurrency: 4,
        backoff: { baseMs: 1000, maxMs: 60_000 },
        signal: stopAfter(cleanups, 60_000),
      });
      const { service } = world;
      const refused = service
        .requests()
        .filter((r) => r.method === 'POST' && r.path === '/v1/generations' && r.status === 429);
      // The limit was met (the test proves something) and waited out.
      expect(refused.length).toBeGreaterThan(0);
      // Before: ~480 refused creates in a few seconds, the day closed, 2 paid jobs left.
      expect(refused.length).toBeLessThanOrEqual(40);
      expectEveryPhotoPaidOnce(summary, service, EMAIL, PHOTOS);
    },
    90_000,
  );

  it('polls limited to one a second, refused 429 with Retry-After 0: every paid job collected, refusals bounded', async () => {
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 9, timeScale: 0.01, jobSeconds: [300, 400] },
      photos: PHOTOS,
    });
    // A gateway in front: a poll within 1 s of the last one let through is refused.
    let lastPoll = 0;
    const proxy = await startFaultProxy({
      target: world.service.url,
      retryAfterSeconds: 0,
      choose: (method, path) => {
        if (method !== 'GET' || !/^\/v1\/generations\/[^/]+$/.test(path)) return null;
        if (Date.now() - lastPoll < 1000) return 'rateLimit429';
        lastPoll = Date.now();
        return null;
      },
    });
    cleanups.push(() => proxy.close());
    const summary = await runOnWorld(world, {
      concurrency: 6,
      backoff: { baseMs: 1000, maxMs: 60_000 },
      baseUrl: proxy.url,
      signal: stopAfter(cleanups, 60_000),
    });
    const refused = proxy.log.filter((e) => e.fault === 'rateLimit429');
    expect(refused.length).toBeGreaterThan(0);
    // Before: ~480 refused polls in 9 s, the studio's own count at the day's 500, 6 paid jobs left.
    expect(refused.length).toBeLessThanOrEqual(40);
    expectEveryPhotoPaidOnce(summary, world.service, EMAIL, PHOTOS);
  }, 90_000);
});
