/**
 * A create charged and answered '303 See Other' to its job on another origin (a front on one host
 * pointing at the API on another) is never followed: fetch would ask the job with a GET and, across
 * origins, without the key, and its 401 was read as "create refused, nothing charged": every run
 * paid the photos again (rev15 R3). A 303 names the job made (taken from its Location); any other
 * redirect is read as a lost answer (the key probe), so nothing is paid twice. Against the
 * reference /v1 service (written from the spec alone) behind a pass-through on loopback, through
 * `run`'s own path; each run stopped after 45 s if not ended.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runOnWorld, stopAfter } from './helpers/reference-studio';
import { rewritingFront } from './helpers/rewriting-front';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'create-redirect@ref.test';
const PHOTOS = 3;

/**
 * A front that passes everything to the service, but answers a charged create (2xx with its id)
 * `redirect` to the job at the service's own origin (another port: another origin).
 */
const redirectOnCreate = (target: string, redirect: 303 | 307) =>
  rewritingFront(cleanups, target, (request, answer) => {
    const create = request.method === 'POST' && request.path === '/v1/generations';
    if (!create || answer.status < 200 || answer.status >= 300) return answer;
    const { id } = JSON.parse(answer.body.toString('utf8')) as { id: string };
    return {
      status: redirect,
      headers: { location: `${target}/v1/generations/${id}` },
      body: Buffer.alloc(0),
    };
  });

/** Two runs over the same photos through a front answering each charged create `redirect`. */
async function twoRunsBehind(redirect: 303 | 307) {
  const world = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 3, timeScale: 0.01, jobSeconds: [20, 30] },
    photos: PHOTOS,
  });
  const baseUrl = await redirectOnCreate(world.service.url, redirect);
  const first = await runOnWorld(world, { baseUrl, signal: stopAfter(cleanups, 45_000) });
  const second = await runOnWorld(world, { baseUrl, signal: stopAfter(cleanups, 45_000) });
  return { world, first, second };
}

describe("a create's redirect is not followed", () => {
  it('303 See Other to the job on another origin: the job taken from the Location, each photo paid once and delivered', async () => {
    const { world, first, second } = await twoRunsBehind(303);
    // Before: each photo failed 'Invalid or revoked API key' (the followed GET without the key),
    // 3 charged by run 1 and 3 more by run 2.
    expect(first.failed).toEqual([]);
    expect(first.exported).toBe(PHOTOS);
    expect(second.exported).toBe(0);
    expect(world.service.jobs(EMAIL)).toHaveLength(PHOTOS);
    expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
    expect(first.diamondsSpent).toBe(PHOTOS);
  }, 120_000);

  it('307 to another origin (the service may have acted): a lost answer, never a refusal; nothing paid twice over two runs', async () => {
    const { world, first } = await twoRunsBehind(307);
    expect(first.failed).toEqual([]);
    // Held as maybe charged for a person (this service keeps no Idempotency-Key), not resubmitted.
    expect(first.uncertain).toHaveLength(PHOTOS);
    expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
  }, 120_000);
});
