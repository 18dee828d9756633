/**
 * A create charged and answered 202 with its job named only by a Location header (RFC 9110's 202
 * "status monitor": body {success: true, status: 'processing'}, `Location: /v1/generations/<id>`)
 * was read as a lost answer: each photo was held uncertain, paid and never collected, and a
 * resubmit paid again (review rev27 D1). The job is the Location's. Against the reference /v1
 * service (written from the spec alone) behind a front on loopback that moves the id from the
 * body to the header, through `run`'s own path; each run stopped after 45 s if not ended.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runOnWorld, stopAfter } from './helpers/reference-studio';
import { rewritingFront } from './helpers/rewriting-front';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'create-location-only@ref.test';
const PHOTOS = 3;

/** Each charged create answered 202 with no id in its body, the job named by `location(id)`. */
const locationOnly = (target: string, location: (id: string) => string, body: string) =>
  rewritingFront(cleanups, target, (request, answer) => {
    const create = request.method === 'POST' && request.path === '/v1/generations';
    if (!create || answer.status < 200 || answer.status >= 300) return answer;
    const { id } = JSON.parse(answer.body.toString('utf8')) as { id: string };
    return {
      status: 202,
      headers: { 'content-type': 'application/json', location: location(id) },
      body: Buffer.from(body),
    };
  });

async function twoRuns(location: (id: string) => string, body: string) {
  const world = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 30] },
    photos: PHOTOS,
  });
  const baseUrl = await locationOnly(world.service.url, location, body);
  const first = await runOnWorld(world, { baseUrl, signal: stopAfter(cleanups, 45_000) });
  const second = await runOnWorld(world, { baseUrl, signal: stopAfter(cleanups, 45_000) });
  return { world, first, second };
}

describe('a create whose job is named only by its Location', () => {
  it('202 {success, status} with Location /v1/generations/<id>: each photo paid once and delivered', async () => {
    const { world, first, second } = await twoRuns(
      (id) => `/v1/generations/${encodeURIComponent(id)}`,
      '{"success":true,"status":"processing"}',
    );
    // Before: 3 uncertain ('answered 202 ... without a job id'), 0 exported, 3 charged, never collected.
    expect(first.uncertain).toEqual([]);
    expect(first.failed).toEqual([]);
    expect(first.exported).toBe(PHOTOS);
    expect(second.exported).toBe(0);
    expect(world.service.jobs(EMAIL)).toHaveLength(PHOTOS);
    expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
    expect(first.diamondsSpent).toBe(PHOTOS);
  }, 120_000);

  it('202 with an empty body and an absolute Location (a front on another host): the same', async () => {
    const { world, first } = await twoRuns(
      (id) => `https://api.front.test/v1/generations/${encodeURIComponent(id)}`,
      '',
    );
    expect(first.uncertain).toEqual([]);
    expect(first.exported).toBe(PHOTOS);
    expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
  }, 120_000);

  it('a Location that names no job (not under /v1/generations): still a lost answer, never paid twice', async () => {
    const { world, first, second } = await twoRuns(
      (id) => `/status/${encodeURIComponent(id)}/monitor`,
      '{"success":true,"status":"processing"}',
    );
    expect(first.exported).toBe(0);
    expect(first.uncertain).toHaveLength(PHOTOS);
    expect(second.exported).toBe(0);
    expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
  }, 120_000);
});

describe('a create answered done with its results and no job id (a synchronous service)', () => {
  it('its results are collected from the answer, never polled; paid once over two runs', async () => {
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 5, timeScale: 0.01, jobSeconds: [0, 0], createAnswer: 'completedNoId' },
      photos: PHOTOS,
    });
    // Before: 3 uncertain ('answered 200 … without a job id'), 0 exported, 3 charged.
    const first = await runOnWorld(world, { signal: stopAfter(cleanups, 45_000) });
    expect(first.uncertain).toEqual([]);
    expect(first.failed).toEqual([]);
    expect(first.exported).toBe(PHOTOS);
    expect(first.diamondsSpent).toBe(PHOTOS);
    const second = await runOnWorld(world, { signal: stopAfter(cleanups, 45_000) });
    expect(second.exported).toBe(0);
    expect(second.diamondsSpent).toBe(0);
    expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
    const polls = world.service
      .requests()
      .filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/'));
    expect(polls).toEqual([]);
  }, 120_000);
});

describe('a create naming its job under another name', () => {
  /** Each charged create answered with its id moved to `shape(id)`. */
  const renamed = (target: string, shape: (id: string) => Record<string, unknown>) =>
    rewritingFront(cleanups, target, (request, answer) => {
      const create = request.method === 'POST' && request.path === '/v1/generations';
      if (!create || answer.status < 200 || answer.status >= 300) return answer;
      const { id } = JSON.parse(answer.body.toString('utf8')) as { id: string };
      return {
        status: 202,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ success: true, ...shape(id) })),
      };
    });

  for (const [what, shape] of [
    ['jobId', (id: string) => ({ jobId: id, status: 'processing' })],
    ['a generation envelope', (id: string) => ({ generation: { id, status: 'processing' } })],
  ] as const)
    it(`${what}: each photo paid once and delivered`, async () => {
      const world = await referenceWorld(cleanups, {
        email: EMAIL,
        diamonds: 100,
        service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 30] },
        photos: PHOTOS,
      });
      const baseUrl = await renamed(world.service.url, shape);
      // Before: 3 uncertain ('answered 202 … without a job id'), 0 exported, 3 charged.
      const first = await runOnWorld(world, { baseUrl, signal: stopAfter(cleanups, 45_000) });
      expect(first.uncertain).toEqual([]);
      expect(first.exported).toBe(PHOTOS);
      expect(chargedTo(world.service, EMAIL)).toBe(PHOTOS);
    }, 120_000);
});
