/**
 * Poll answers as a spec-following service may give them (the spec shows `processing`,
 * `completed`, `failed` and leaves catalog statuses open), against the reference /v1 service
 * (written from the spec alone): a catalog job queued first with no counts, a `completed` whose
 * results are listed a little later (or not at all), a subset of a ready set reporting the set's
 * full count, and a job that never finishes. Each is charged once and costs a bounded number of
 * polls; nothing the service called completed is taken as refunded.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import { StudioEngine } from '../../src/studio/engine';
import { CUTOUT_RECIPE, shiftableClock } from './helpers/studio-fixtures';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';
import type { ReferenceServiceOptions } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'poll-latitude@example.com';

/** A ready shoot of the reference set shoot-02 (3 shots), or of its second shot alone. */
const readyShoot = (shotIds?: string[]): Recipe => ({
  request: {
    readyTemplateSetId: 'shoot-02',
    ...(shotIds ? { shotIds } : {}),
    images: { garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{shot}-{n}' },
});

type World = ReferenceWorld;

// Jobs of 0.2 s unless the options say otherwise.
const world = (options: ReferenceServiceOptions) =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 200,
    service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0, ...options },
  });

/** `dropshoot run` on the world's data folder, as the CLI drives it. */
const run = (w: World, recipe: Recipe = CUTOUT_RECIPE, signal?: AbortSignal) =>
  runOnWorld(w, { recipe, ...(signal ? { signal } : {}) });

const polls = (w: World) =>
  w.service.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/'))
    .length;
const charges = (w: World) => w.service.jobs(EMAIL).map((j) => j.charged);

describe('statuses the spec does not show', () => {
  it('a catalog job answering pack_queued (no counts) before its shots start is collected, charged once', async () => {
    // The first poll (2.5 s for a ready shoot) meets the job still queued.
    const w = await world({ catalogStatus: 'pack', catalogQueuedMs: 4000 });
    const first = await run(w, readyShoot());
    expect(first.failed).toEqual([]);
    expect(first.exported).toBe(1);
    expect(first.files).toHaveLength(3);
    const again = await run(w, readyShoot());
    expect(again.diamondsSpent).toBe(0);
    expect(charges(w)).toHaveLength(1);
  });
});

describe('a final status is final', () => {
  it('a subset of a ready set reporting the set full count is collected at pack_completed, in a few polls', async () => {
    const w = await world({ catalogStatus: 'pack', packTotalFullSet: true });
    const stop = AbortSignal.timeout(10_000);
    const summary = await run(w, readyShoot(['take-2']), stop);
    expect(summary.interrupted).toBeUndefined();
    expect(summary.exported).toBe(1);
    expect(summary.files).toHaveLength(1);
    expect(polls(w)).toBeLessThanOrEqual(3);
    expect(charges(w)).toHaveLength(1);
    // The create's diamondCost over the set's packTotal is not the shot's price: nothing below
    // what the one shot cost is planned with (a full set would cross --max-diamonds).
    const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey });
    const engine = new StudioEngine({
      dataDir: path.join(w.root, 'data'),
      client,
      apiKey: w.apiKey,
    });
    try {
      await engine.spending.loadPrices();
      expect(engine.spending.shotPrice().diamonds).toBeGreaterThanOrEqual(charges(w)[0]!);
    } finally {
      await engine.close();
      await client.close();
    }
  });
});

describe('completed with no results', () => {
  it('listed a little later: asked again and collected', async () => {
    // The first poll (0.8 s) meets `completed` with no URLs for 1.5 s more.
    const w = await world({ completedEmptyMs: 1500 });
    const summary = await run(w);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(charges(w)).toHaveLength(1);
  });

  it('never listed: held as paid without results (not refunded); the next run asks the same job, never pays again', async () => {
    const w = await world({ completedEmptyMs: 600_000 });
    const first = await run(w);
    expect(first.exported).toBe(0);
    expect(first.failed).toHaveLength(1);
    expect(first.failed[0]!.reason).toMatch(/paid without results/);
    // Counted as spent: the service called it completed.
    expect(first.diamondsSpent).toBe(charges(w)[0]);
    expect(first.diamondsSpent).toBeGreaterThan(0);
    const pollsFirst = polls(w);
    expect(pollsFirst).toBeLessThanOrEqual(5);
    const again = await run(w);
    expect(again.failed).toHaveLength(1);
    expect(again.diamondsSpent).toBe(0);
    expect(polls(w) - pollsFirst).toBeLessThanOrEqual(5);
    expect(charges(w)).toHaveLength(1);
  }, 60_000);
});

describe('a job that never finishes', () => {
  it('is polled a quarter of its age apart: far fewer than 180 polls an hour', async () => {
    const clock = shiftableClock((undo) => cleanups.push(undo));
    const w = await world({ timeScale: 1, jobSeconds: [1e7, 1e7] });
    const stop = new AbortController();
    // The run keeps waiting for the whole hour (it would stop waiting after 30 min by default).
    const running = runOnWorld(w, {
      recipe: CUTOUT_RECIPE,
      signal: stop.signal,
      giveUpAfterMs: 2 * 3_600_000,
    });
    // An hour in steps of 60 s, each given time for the scheduler's tick (every 250 ms).
    while (w.service.jobs(EMAIL).length === 0) await new Promise((r) => setTimeout(r, 50));
    for (let minute = 0; minute < 60; minute++) {
      await new Promise((r) => setTimeout(r, 300));
      clock.moveOn(60_000);
    }
    await new Promise((r) => setTimeout(r, 300));
    stop.abort();
    const summary = await running;
    expect(summary.interrupted?.unfinished).toHaveLength(1);
    expect(charges(w)).toHaveLength(1);
    // Gaps capped at 20 s poll at every step (60); a quarter of the age: about 20.
    expect(polls(w)).toBeLessThanOrEqual(30);
  }, 60_000);
});

describe('a job not found right after its create', () => {
  it('a 404 within seconds of the create (a read replica behind) is asked again: collected, charged once', async () => {
    // The first poll (0.8 s) meets a 404 for 2 s more.
    const w = await world({ poll404ForMs: 2000 });
    const summary = await run(w);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(charges(w)).toHaveLength(1);
  });
});
