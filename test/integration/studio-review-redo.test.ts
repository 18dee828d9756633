/**
 * Redo in review pays for what was selected and no more, once per photo: against the reference
 * /v1 service (written from the spec alone), on the studio's real database, with real images. A
 * photo shot once by `dropshoot run`, then redone from the studio's review commands as the UI
 * sends them; every charge is read from the service's own ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Studio } from '../../src/studio';
import type { ItemView, Recipe, ResultView } from '../../src/shared/studio';
import { ACTIVE_STATES } from '../../src/shared/studio';
import type { ReferenceServiceOptions } from '../reference-service';
import {
  referenceWorld,
  runOnWorld,
  studioOnWorld,
  type ReferenceWorld,
} from './helpers/reference-studio';
import { call } from './helpers/studio-commands';

vi.setConfig({ testTimeout: 120_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'redo@example.com';

/** A ready shoot of the reference set shoot-02 (3 shots). */
const READY_SHOOT: Recipe = {
  request: { readyTemplateSetId: 'shoot-02', images: { garment_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{shot}-{n}' },
};
/** One job that makes all its results (a pack). */
const PACK: Recipe = {
  request: { toolId: 'clothing_ecom_pack', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{tool}-{n}' },
};

/** One photo shot by `run`, then the studio opened on the same data folder. */
async function shotOnce(
  recipe: Recipe,
  options: ReferenceServiceOptions = {},
  /** The same photo also run from a second folder (its own batch and export folder). */
  secondFolder = false,
): Promise<{ w: ReferenceWorld; studio: Studio }> {
  const w = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 500,
    service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0, ...options },
  });
  const first = await runOnWorld(w, { recipe });
  expect(first.exported).toBe(1);
  if (secondFolder) {
    const folders = { inDir: path.join(w.root, 'in-2'), outDir: path.join(w.root, 'out-2') };
    fs.cpSync(w.inDir, folders.inDir, { recursive: true });
    expect((await runOnWorld(w, { recipe, folders })).exported).toBe(1);
  }
  const studio = await studioOnWorld(w, cleanups);
  return { w, studio };
}

const results = async (studio: Studio) =>
  (await call(studio, 'results.list', { limit: 500 })).results as ResultView[];
const items = async (studio: Studio) =>
  (await call(studio, 'queue.list', { limit: 500 })).items as ItemView[];

/** Every queued redo has its results (nothing left in flight). */
async function settled(studio: Studio): Promise<ItemView[]> {
  const end = Date.now() + 60_000;
  for (;;) {
    const all = await items(studio);
    if (!all.some((i) => ACTIVE_STATES.includes(i.state))) return all;
    if (Date.now() > end) throw new Error(`still in flight: ${JSON.stringify(all)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const charges = (w: ReferenceWorld) => w.service.ledger(EMAIL).filter((e) => e.kind === 'charge');

describe('redo of a photo whose results cannot be asked one by one', () => {
  it('a ready shoot whose job names no shots: its 3 results redone are one new job, paid once; pressed again, nothing more', async () => {
    const { w, studio } = await shotOnce(READY_SHOOT);
    const [firstCharge] = charges(w);
    const three = await results(studio);
    expect(three).toHaveLength(3);
    // The spec's poll names no shots: nothing tells the results' shots apart.
    expect(three.every((r) => r.shotId === null)).toBe(true);

    const ids = three.map((r) => r.id);
    // Held queued, so the second press meets the first redo still on its way.
    await call(studio, 'queue.pause', { paused: true });
    expect(await call(studio, 'review.redo', { resultIds: ids })).toEqual({
      queued: 1,
      alreadyQueued: 0,
      alreadyRedone: 0,
      diamonds: -firstCharge!.delta,
    });
    // The same redo again while it is on its way (key R twice): not queued again.
    expect(await call(studio, 'review.redo', { resultIds: ids })).toEqual({
      queued: 0,
      alreadyQueued: 1,
      alreadyRedone: 0,
      diamonds: 0,
    });
    await call(studio, 'queue.pause', { paused: false });
    await settled(studio);
    expect(charges(w)).toHaveLength(2);
    expect(charges(w)[1]!.delta).toBe(firstCharge!.delta);
    expect((await results(studio)).filter((r) => r.review === 'rejected')).toHaveLength(3);

    // One result of it redone: still the photo's one job (its shot cannot be asked alone).
    const newest = (await results(studio)).filter((r) => r.review !== 'rejected');
    expect(newest).toHaveLength(3);
    expect(await call(studio, 'review.redo', { resultIds: [newest[0]!.id] })).toMatchObject({
      queued: 1,
    });
    await settled(studio);
    expect(charges(w)).toHaveLength(3);
  });

  it('two presses at once make one job', async () => {
    const { w, studio } = await shotOnce(READY_SHOOT);
    const ids = (await results(studio)).map((r) => r.id);
    const answers = await Promise.all([
      call(studio, 'review.redo', { resultIds: ids }),
      call(studio, 'review.redo', { resultIds: ids }),
    ]);
    expect(answers.map((a) => a.queued).sort()).toEqual([0, 1]);
    await settled(studio);
    expect(charges(w)).toHaveLength(2);
  });

  it('a pack (one job makes all its results): its results redone are one new job, paid once', async () => {
    const { w, studio } = await shotOnce(PACK);
    const [firstCharge] = charges(w);
    const all = await results(studio);
    expect(all.length).toBeGreaterThan(1);
    expect(await call(studio, 'review.redo', { resultIds: all.map((r) => r.id) })).toMatchObject({
      queued: 1,
      alreadyQueued: 0,
    });
    await settled(studio);
    expect(charges(w)).toHaveLength(2);
    expect(charges(w)[1]!.delta).toBe(firstCharge!.delta);
  });
});

describe('redo of the same photo shot from two folders', () => {
  it('each folder gets its own new job: one is not taken for the other on its way', async () => {
    const { w, studio } = await shotOnce(PACK, {}, true);
    const both = (await items(studio)).filter(
      (i) => i.state === 'review' || i.state === 'exported',
    );
    expect(new Set(both.map((i) => i.batchId)).size).toBe(2);
    const ids = (await results(studio)).map((r) => r.id);
    await call(studio, 'queue.pause', { paused: true });
    // Before: { queued: 1, alreadyQueued: 1 }: the second folder's photo never got a new result.
    expect(await call(studio, 'review.redo', { resultIds: ids })).toMatchObject({
      queued: 2,
      alreadyQueued: 0,
    });
    await call(studio, 'queue.pause', { paused: false });
    const all = await settled(studio);
    // The second folder's first result was the first folder's, exported again (nothing spent);
    // each folder's redo is a job of its own.
    expect(charges(w)).toHaveLength(3);
    expect(all.filter((i) => i.state === 'exported')).toHaveLength(4);
  });
});

describe('a stale redo (pressed on a screen still showing a result its redo already replaced)', () => {
  it('queues nothing and says so; a redo of the current result is still paid once', async () => {
    const { w, studio } = await shotOnce(READY_SHOOT);
    const [firstCharge] = charges(w);
    const old = (await results(studio)).map((r) => r.id);
    // One result redone: the shoot's one job (its shots are not named) makes all three again.
    expect(
      await call(studio, 'review.redoPrice', { resultIds: [old[0]!], askPrices: true }),
    ).toEqual({
      queued: 1,
      alreadyQueued: 0,
      alreadyRedone: 0,
      diamonds: -firstCharge!.delta,
      whole: 1,
    });
    expect(charges(w)).toHaveLength(1); // the price is only read
    expect(await call(studio, 'review.redo', { resultIds: [old[0]!] })).toMatchObject({
      queued: 1,
    });
    await settled(studio);
    expect(charges(w)).toHaveLength(2);

    // The old results, already rejected and replaced by the delivered redo, pressed again.
    const stale = { queued: 0, alreadyQueued: 0, alreadyRedone: 1, diamonds: 0 };
    expect(await call(studio, 'review.redoPrice', { resultIds: old })).toEqual({
      ...stale,
      whole: 0,
    });
    // Before: { queued: 1, alreadyQueued: 0, diamonds: 12 } and a third charge.
    expect(await call(studio, 'review.redo', { resultIds: old })).toEqual(stale);
    expect(await call(studio, 'review.redo', { resultIds: [old[1]!] })).toEqual(stale);
    expect((await items(studio)).filter((i) => i.state === 'queued')).toHaveLength(0);
    await settled(studio);
    expect(charges(w)).toHaveLength(2);

    // The redo's results, rejected: they are the photo's current ones, so their redo is paid once.
    const current = (await results(studio)).filter((r) => !old.includes(r.id)).map((r) => r.id);
    expect(current).toHaveLength(3);
    await call(studio, 'review.set', { ids: current, review: 'rejected' });
    expect(await call(studio, 'review.redo', { resultIds: current })).toEqual({
      queued: 1,
      alreadyQueued: 0,
      alreadyRedone: 0,
      diamonds: -firstCharge!.delta,
    });
    await settled(studio);
    expect(charges(w)).toHaveLength(3);
    expect(charges(w)[2]!.delta).toBe(firstCharge!.delta);
  });
});
