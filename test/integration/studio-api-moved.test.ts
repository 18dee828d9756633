/**
 * A service whose whole API moved (every /v1 request answered 308 to /api/v1, review rev17 R1):
 * reads follow the redirect, writes never do (a charge must not go to an address nobody gave).
 * Before, each upload's redirect was read as a lost answer and sent again 12 times, with no word
 * of why, and the run took minutes. Now the upload (nothing paid hangs on it) fails at once with
 * the address to give instead, and a run given it delivers every photo, each paid once. Against
 * the reference /v1 service (written from the spec alone) behind a front on loopback.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runOnWorld, stopAfter } from './helpers/reference-studio';
import { rewritingFront, type FrontRequest } from './helpers/rewriting-front';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'api-moved@ref.test';
const PHOTOS = 3;

describe('the whole API moved to another path (308 on every /v1 request)', () => {
  it('uploads fail at once naming the new address; a run given it delivers every photo, each paid once', async () => {
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 30] },
      photos: PHOTOS,
    });
    const asked: FrontRequest[] = [];
    const front = await rewritingFront(cleanups, world.service.url, (_request, answer) => answer, {
      route: (request) => {
        asked.push({ ...request });
        if (request.path.startsWith('/api/v1/')) return { path: request.path.slice('/api'.length) };
        return { status: 308, headers: { location: `/api${request.path}` }, body: Buffer.alloc(0) };
      },
    });
    const uploadsAt = (prefix: string) =>
      asked.filter((r) => r.method === 'POST' && r.path === `${prefix}/v1/uploads`).length;

    const first = await runOnWorld(world, {
      baseUrl: front,
      signal: stopAfter(cleanups, 45_000),
    });
    // Before: each photo's upload was sent 12 times and failed 'gave up after 12 attempts'.
    expect(uploadsAt('')).toBe(PHOTOS);
    expect(uploadsAt('/api')).toBe(0);
    expect(first.failed).toHaveLength(PHOTOS);
    for (const failed of first.failed)
      expect(failed.reason).toContain(`give its new address (--remote ${front}/api)`);
    expect(first.exported).toBe(0);
    expect(chargedTo(world.service, EMAIL)).toBe(0);

    const second = await runOnWorld(world, {
      baseUrl: `${front}/api`,
      signal: stopAfter(cleanups, 45_000),
    });
    expect(second.failed).toEqual([]);
    expect(second.exported).toBe(PHOTOS);
    expect(world.service.jobs(EMAIL)).toHaveLength(PHOTOS);
    expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
    expect(second.diamondsSpent).toBe(PHOTOS);
  }, 120_000);
});
