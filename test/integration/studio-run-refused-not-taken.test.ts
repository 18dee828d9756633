/**
 * Refusals that say the service did not take a request, met by `run` on its own path (HttpClient,
 * StudioEngine, runBatch) against the reference /v1 service (written from the spec alone) behind
 * the fault proxy on loopback (review rev14 C1, P2):
 * - a create answered 503 'Service temporarily unavailable' (spec §7 names no 503), with or without
 *   Retry-After: a gateway answers 503 too after the service charged (review rev19 G1), so it is
 *   no proof that nothing was charged: once the wait is over its key is probed like a lost answer's;
 *   this service keeps no keys, so the photo is left uncertain, and `--uncertain resubmit` delivers
 *   it, paid once (before rev19 G1 it was sent again as "nothing charged", delivered in one run);
 * - one 401 to a poll of a paid job: asked again a few times before the key is called revoked;
 *   a key revoked for good still fails the photos promptly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxyOptions } from '../reference-service/fault-proxy';
import { chargedTo, referenceWorld, runOnWorld, stopAfter } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'refused-not-taken@ref.test';
const PHOTOS = 3;

async function runThrough(proxy: Omit<FaultProxyOptions, 'target'>) {
  const world = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 5, timeScale: 0.01, jobSeconds: [100, 150] },
    photos: PHOTOS,
  });
  const fault = await startFaultProxy({ target: world.service.url, ...proxy });
  cleanups.push(() => fault.close());
  const started = Date.now();
  const run = (uncertain?: 'resubmit') =>
    runOnWorld(world, {
      baseUrl: fault.url,
      concurrency: 3,
      backoff: { baseMs: 50, maxMs: 400 },
      ...(uncertain ? { uncertain } : {}),
      signal: stopAfter(cleanups, 60_000),
    });
  const summary = await run();
  const { service } = world;
  return {
    summary,
    service,
    fault,
    charged: chargedTo(service, EMAIL),
    secs: (Date.now() - started) / 1000,
    run,
  };
}

const isCreate = (method: string, p: string) => method === 'POST' && p === '/v1/generations';

describe('a create answered 503 may have been charged: its key probed, uncertain with a service keeping no keys', () => {
  it.each([{ retryAfterSeconds: 1 }, { retryAfterSeconds: undefined }])(
    'Retry-After $retryAfterSeconds: nothing paid, each photo uncertain; `--uncertain resubmit` delivers each, paid once',
    async ({ retryAfterSeconds }) => {
      let creates = 0;
      const { summary, service, fault, charged, secs, run } = await runThrough({
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
        // The first three creates (one per photo) answered 503, not forwarded.
        choose: (method, p) =>
          isCreate(method, p) ? (++creates <= PHOTOS ? 'unavailable503' : null) : undefined,
      });
      expect(fault.log.filter((e) => e.fault === 'unavailable503')).toHaveLength(PHOTOS);
      // Changed by rev19 G1: this service keeps no Idempotency-Key, so a 503 cannot be told from
      // one after a charge; the photos were sent again and delivered in this run before.
      expect(summary.uncertain).toHaveLength(PHOTOS);
      expect(summary.failed).toEqual([]);
      expect(summary.exported).toBe(0);
      // Nothing sent again as it was (a resend would have been passed on and charged).
      expect(charged).toBe(0);
      // Retry-After honoured: the key was not asked about before the second it asked for.
      if (retryAfterSeconds) expect(secs).toBeGreaterThanOrEqual(retryAfterSeconds);
      const resubmitted = await run('resubmit');
      expect(resubmitted.failed).toEqual([]);
      expect(resubmitted.exported).toBe(PHOTOS);
      expect(service.jobs(EMAIL)).toHaveLength(PHOTOS);
      expect(chargedTo(service, EMAIL)).toBe(PHOTOS);
    },
    90_000,
  );
});

describe('a 401 to one poll of a paid job is asked again before the key is called revoked', () => {
  it('one 401 among the polls: every paid photo exported in the run', async () => {
    let polls = 0;
    const { summary, fault, charged } = await runThrough({
      choose: (method, p) =>
        method === 'GET' && p.startsWith('/v1/generations/')
          ? ++polls === 1
            ? 'unauthorized401'
            : null
          : undefined,
    });
    expect(fault.log.filter((e) => e.fault === 'unauthorized401')).toHaveLength(1);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(PHOTOS);
    expect(charged).toBe(PHOTOS);
  }, 60_000);

  it('every poll refused 401 (a key revoked after the creates): the run ends promptly saying so', async () => {
    const { summary, charged, secs } = await runThrough({
      choose: (method, p) =>
        method === 'GET' && p.startsWith('/v1/generations/') ? 'unauthorized401' : undefined,
    });
    expect(charged).toBe(PHOTOS);
    expect(summary.exported).toBe(0);
    expect(summary.failed).toHaveLength(PHOTOS);
    for (const f of summary.failed) expect(f.reason).toMatch(/revoked API key/);
    expect(secs).toBeLessThan(20);
  }, 60_000);
});
