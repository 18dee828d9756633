/**
 * The studio as the desktop app drives it: hot folders, the durable queue, review and export,
 * through the contract's commands (validated exactly as over IPC or HTTP), on real folders, real
 * images, a real studio database and the embedded core.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InProcessClient, LOCAL_ACCOUNT_EMAIL } from '../../src/client/in-process';
import { openCore } from '../../src/core';
import { loadCatalog } from '../../src/core/catalog';
import { createLocalProvider } from '../../src/core/providers/local';
import type { ProviderAdapter } from '../../src/core/providers/types';
import { openStudio, runCommand, type Studio } from '../../src/studio';
import type { ItemView, Recipe, ResultView } from '../../src/shared/studio';
import { requestBound } from './helpers/poll-bound';
import { call, until } from './helpers/studio-commands';

// Hot folders and local jobs run slowly on a loaded machine: the waits below get room (no
// speed is asserted here; speed is `npm run bench`'s).
vi.setConfig({ testTimeout: 180_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const recipeFor = (toolId: string, extra: Record<string, unknown> = {}): Recipe => ({
  request: { toolId, images: { user_photo: '{photo}' }, ...extra },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{tool}-{n}' },
});

async function photo(file: string, hue: number): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="640"><rect width="100%" height="100%" fill="#f2f2f0"/><rect x="120" y="120" width="240" height="400" rx="30" fill="hsl(${hue},70%,45%)"/></svg>`;
  await sharp(Buffer.from(svg)).jpeg({ quality: 88 }).toFile(file);
}

type Setup = {
  studio: Studio;
  client: InProcessClient;
  root: string;
  inDir: string;
  outDir: string;
};

/** A studio on a fresh embedded core; `diamonds` sets the local account's starting balance. */
async function setup(opts: { diamonds?: number; provider?: ProviderAdapter } = {}): Promise<Setup> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-engine-'));
  const core = await openCore({
    dataDir: path.join(root, 'core'),
    allowPrivateUrls: true,
    ...(opts.provider ? { provider: opts.provider } : {}),
  });
  if (opts.diamonds !== undefined)
    await core.admin.createAccount({
      email: LOCAL_ACCOUNT_EMAIL,
      diamonds: opts.diamonds,
      dailyCap: 100_000,
    });
  const client = await InProcessClient.create(core, true);
  const studio = await openStudio({
    dataDir: path.join(root, 'studio'),
    client,
    settleMs: 150,
    concurrency: 2,
    balanceRecheckMs: 200,
  });
  cleanups.push(async () => {
    await studio.close();
    await client.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
  const inDir = path.join(root, 'in');
  fs.mkdirSync(inDir);
  return { studio, client, root, inDir, outDir: path.join(root, 'out') };
}

const items = async (studio: Studio) => (await call(studio, 'queue.list', {})).items;

const allIn = (studio: Studio, count: number, ok: (i: ItemView) => boolean) => async () => {
  const list = await items(studio);
  return list.length === count && list.every(ok) ? list : undefined;
};

describe('hot folder to export', () => {
  it('queues with a recipe snapshot, reviews, exports the approved results and moves the sources', async () => {
    const { studio, inDir, outDir, root } = await setup();
    const folder = await call(studio, 'folders.add', {
      path: inDir,
      outputDir: outDir,
      recipe: recipeFor('remove_background'),
    });
    await call(studio, 'queue.pause', { paused: true });
    await Promise.all(
      ['a.jpg', 'b.jpg', 'looks/c.jpg'].map((name, i) => photo(path.join(inDir, name), i * 110)),
    );
    await until(
      'three queued items',
      allIn(studio, 3, (i) => i.state === 'queued'),
    );

    // Editing the folder's recipe now does not change what was queued.
    await call(studio, 'folders.setRecipe', { id: folder.id, recipe: recipeFor('photo_enhance') });
    const budgetBefore = await call(studio, 'budget.get', {});
    await call(studio, 'queue.pause', { paused: false });
    const inReview = await until(
      'three items in review',
      allIn(studio, 3, (i) => i.state === 'review'),
    );
    expect(inReview.map((i) => i.toolId)).toEqual([
      'remove_background',
      'remove_background',
      'remove_background',
    ]);
    expect(inReview.map((i) => i.diamonds)).toEqual([1, 1, 1]);
    expect(inReview.find((i) => i.name === 'c.jpg')?.relativeDir).toBe('looks');

    // No runaway polling: at most upload, create and the poller's own most polls for how long
    // each job took (holds on a loaded machine; the tight per-photo figure is in the bench).
    const budgetAfter = await call(studio, 'budget.get', {});
    const limit = requestBound(studio.engine.db, null);
    expect(limit.jobs).toBe(3);
    expect(budgetAfter.requestsUsedToday - budgetBefore.requestsUsedToday).toBeLessThanOrEqual(
      limit.bound,
    );

    const { results } = await call(studio, 'results.list', { review: 'pending' });
    expect(results).toHaveLength(3);
    for (const result of results) {
      expect(fs.statSync(path.join(root, 'studio', 'library', result.file)).size).toBeGreaterThan(
        0,
      );
      expect(
        result.thumb && fs.existsSync(path.join(root, 'studio', 'library', result.thumb)),
      ).toBe(true);
      const item = inReview.find((i) => i.id === result.itemId)!;
      const sidecar = JSON.parse(
        fs.readFileSync(
          path.join(
            root,
            'studio',
            'library',
            path.dirname(result.file),
            `${result.sha256}.${item.jobId}.json`,
          ),
          'utf8',
        ),
      );
      expect(sidecar).toMatchObject({
        sourceSha256: item.sha256,
        sourceName: item.name,
        jobId: item.jobId,
        diamonds: 1,
        recipe: recipeFor('remove_background'),
      });
    }
    const byName = (name: string) =>
      results.find((r) => inReview.find((i) => i.id === r.itemId)?.name === name)!;
    expect(
      await call(studio, 'review.set', {
        ids: [byName('a.jpg').id, byName('c.jpg').id],
        review: 'approved',
      }),
    ).toEqual({ changed: 2, unexported: 0 });
    expect(
      await call(studio, 'review.set', { ids: [byName('b.jpg').id], review: 'rejected' }),
    ).toEqual({ changed: 1, unexported: 0 });

    // Approved results are exported; a photo whose every result was declined is `rejected` (a decision, not a failure).
    const done = await until(
      'all three finished',
      allIn(studio, 3, (i) => i.state === 'exported' || i.state === 'rejected'),
    );
    expect(done.map((i) => [i.name, i.state, i.error]).sort()).toEqual([
      ['a.jpg', 'exported', null],
      ['b.jpg', 'rejected', null],
      ['c.jpg', 'exported', null],
    ]);
    const written = fs
      .readdirSync(outDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.png'))
      .sort();
    expect(written).toEqual([
      'a-remove_background-1.png',
      path.join('looks', 'c-remove_background-1.png'),
    ]);
    const cutout = await sharp(path.join(outDir, 'a-remove_background-1.png')).metadata();
    expect(cutout.hasAlpha).toBe(true);
    // Hot folders move finished sources to done/, mirroring their subfolders.
    await until(
      'sources moved to done/',
      async () =>
        fs.existsSync(path.join(inDir, 'done', 'looks', 'c.jpg')) &&
        !fs.existsSync(path.join(inDir, 'a.jpg')),
    );
    expect(fs.existsSync(path.join(inDir, 'done', 'a.jpg'))).toBe(true);
    await until('the rejected source in failed/', async () =>
      fs.existsSync(path.join(inDir, 'failed', 'b.jpg.reason.txt')),
    );
    expect(fs.readFileSync(path.join(inDir, 'failed', 'b.jpg.reason.txt'), 'utf8')).toContain(
      'every result was declined in review',
    );
  }, 180_000);

  it('skips a photo already done with the same recipe (nothing spent) until reprocessed; redo queues again with a changed recipe', async () => {
    const { studio, inDir, outDir, root } = await setup();
    await call(studio, 'folders.add', {
      path: inDir,
      outputDir: outDir,
      recipe: recipeFor('remove_background'),
    });
    await photo(path.join(inDir, 'shirt.jpg'), 200);
    const [first] = await until(
      'first in review',
      allIn(studio, 1, (i) => i.state === 'review'),
    );
    const balance = (await call(studio, 'account.get', {})).diamondBalance;

    // The same bytes again under another name: skipped, with a note saying which item it matches.
    fs.copyFileSync(path.join(inDir, 'shirt.jpg'), path.join(inDir, 'shirt-copy.jpg'));
    const twin = await until('the copy skipped', async () =>
      (await items(studio)).find((i) => i.name === 'shirt-copy.jpg' && i.state === 'skipped'),
    );
    expect(twin.note).toContain(first!.id);
    expect(twin.diamonds).toBe(0);
    expect((await call(studio, 'account.get', {})).diamondBalance).toBe(balance);

    // Reprocess overrides the skip.
    expect(await call(studio, 'queue.reprocess', { ids: [twin.id] })).toEqual({
      changed: 1,
      alreadyQueued: 0,
    });
    await until('the reprocessed copy in review', async () =>
      (await items(studio)).find((i) => i.name === 'shirt-copy.jpg' && i.state === 'review'),
    );

    // Redo with a changed recipe: validated first, then queued as a new item; the old result is rejected.
    const [result] = (await call(studio, 'results.list', { itemId: first!.id }))
      .results as ResultView[];
    const bad = await runCommand(studio.commands, 'review.redo', {
      resultIds: [result!.id],
      recipe: recipeFor('photo_reframe'),
    });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_recipe' } });
    expect(
      await call(studio, 'review.redo', {
        resultIds: [result!.id],
        recipe: recipeFor('photo_reframe', { targetRatio: '1:1' }),
      }),
    ).toMatchObject({ queued: 1, alreadyQueued: 0 });
    const redone = await until('the redo in review', async () =>
      (await items(studio)).find((i) => i.toolId === 'photo_reframe' && i.state === 'review'),
    );
    expect(redone.sha256).toBe(first!.sha256);
    expect((await call(studio, 'results.list', { itemId: first!.id })).results[0]?.review).toBe(
      'rejected',
    );
    const [square] = (await call(studio, 'results.list', { itemId: redone.id })).results;
    const meta = await sharp(path.join(root, 'studio', 'library', square!.file)).metadata();
    expect(meta.width).toBe(meta.height);
  });
});

describe('redo after export', () => {
  it('a redo whose photo went to done/ under another item of it finds it there and runs, paid once each', async () => {
    const { studio, client, inDir, outDir } = await setup();
    await call(studio, 'folders.add', {
      path: inDir,
      outputDir: outDir,
      recipe: recipeFor('remove_background'),
    });
    const before = (await client.getAccount()).diamondBalance;
    await photo(path.join(inDir, 'coat.jpg'), 30);
    /** The newest of `count` items once every one has settled (in review, exported or failed). */
    const newestSettled = async (count: number) => {
      const settled = ['review', 'exported', 'failed'];
      const list = await until(
        `${count} items settled`,
        allIn(studio, count, (i) => settled.includes(i.state)),
      );
      const newest = [...list].sort((a, b) => a.createdAt.localeCompare(b.createdAt)).at(-1)!;
      expect(newest).toMatchObject({ state: 'review', error: null });
      return newest;
    };
    const resultOf = async (itemId: string) =>
      (await call(studio, 'results.list', { itemId })).results[0]!;
    /** Approves the item's result and waits for its export. */
    const exportOf = async (itemId: string) => {
      await call(studio, 'review.set', { ids: [(await resultOf(itemId)).id], review: 'approved' });
      await until(
        'exported',
        async () => (await items(studio)).find((i) => i.id === itemId)?.state === 'exported',
      );
    };
    const done = path.join(inDir, 'done', 'coat.jpg');
    const first = await newestSettled(1);
    await exportOf(first.id);
    await until('the photo in done/', async () => fs.existsSync(done));
    expect(
      await call(studio, 'review.redo', { resultIds: [(await resultOf(first.id)).id] }),
    ).toMatchObject({ queued: 1 });
    const second = await newestSettled(2);
    await exportOf(second.id);
    await until('the photo in done/ again', async () => fs.existsSync(done));
    // Both items of the photo finished at once, and the first one's move took it (as when both
    // results are approved together): the photo is in done/ under the first item, not the redo's.
    const db = studio.engine.db;
    db.prepare('UPDATE items SET moved_to = NULL WHERE id = ?').run(second.id);
    db.prepare('UPDATE items SET moved_to = ? WHERE id = ?').run(done, first.id);
    expect(
      await call(studio, 'review.redo', { resultIds: [(await resultOf(second.id)).id] }),
    ).toMatchObject({ queued: 1 });
    await newestSettled(3);
    expect(before - (await client.getAccount()).diamondBalance).toBe(3);
  });
});

describe('waiting with a reason, never failing', () => {
  it('a folder ceiling holds photos back until it is raised', async () => {
    const { studio, inDir, outDir } = await setup();
    const folder = await call(studio, 'folders.add', {
      path: inDir,
      outputDir: outDir,
      recipe: recipeFor('photo_reframe', { targetRatio: '1:1' }),
      maxDiamonds: 4,
    });
    expect(folder.maxDiamonds).toBe(4);
    await Promise.all([0, 1, 2, 3].map((i) => photo(path.join(inDir, `p${i}.jpg`), i * 80)));
    await until('two in review and two held by the ceiling', async () => {
      const list = await items(studio);
      const review = list.filter((i) => i.state === 'review').length;
      const held = list.filter((i) => i.state === 'queued' && i.waitReason === 'ceiling').length;
      return list.length === 4 && review === 2 && held === 2;
    });
    expect((await call(studio, 'folders.list', {}))[0]).toMatchObject({
      maxDiamonds: 4,
      diamondsSpent: 4,
    });

    const lifted = await call(studio, 'folders.setCeiling', { id: folder.id, maxDiamonds: null });
    expect(lifted.maxDiamonds).toBeNull();
    await until(
      'all four in review',
      allIn(studio, 4, (i) => i.state === 'review'),
    );
    expect((await call(studio, 'folders.list', {}))[0]?.diamondsSpent).toBe(8);
    expect(
      await runCommand(studio.commands, 'folders.setCeiling', { id: folder.id, maxDiamonds: 0 }),
    ).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });

  it('short of diamonds (402): the folder waits and goes on by itself once the balance allows', async () => {
    const { studio, client, inDir, outDir } = await setup({ diamonds: 2 });
    await call(studio, 'folders.add', {
      path: inDir,
      outputDir: outDir,
      recipe: recipeFor('photo_reframe', { targetRatio: '4:5' }),
    });
    await Promise.all([0, 1].map((i) => photo(path.join(inDir, `q${i}.jpg`), 40 + i * 90)));
    await until('one in review, one waiting for diamonds', async () => {
      const list = await items(studio);
      return (
        list.length === 2 &&
        list.some((i) => i.state === 'review') &&
        list.some((i) => i.waitReason === 'no_diamonds' && i.state !== 'failed')
      );
    });
    expect((await call(studio, 'folders.list', {}))[0]?.waitReason).toBe('no_diamonds');
    expect((await call(studio, 'account.get', {})).diamondBalance).toBe(0);

    await client.core.admin.grant({ email: LOCAL_ACCOUNT_EMAIL, diamonds: 10 });
    const both = await until(
      'both in review',
      allIn(studio, 2, (i) => i.state === 'review'),
    );
    expect(both.map((i) => [i.waitReason, i.diamonds, i.error])).toEqual([
      [null, 2, null],
      [null, 2, null],
    ]);
    expect((await call(studio, 'account.get', {})).diamondBalance).toBe(8);
  });

  /** A folder paused before its photos arrive: they wait, queued, in name order. */
  async function pausedFolderWith(count: number) {
    const { studio, inDir, outDir } = await setup();
    const folder = await call(studio, 'folders.add', {
      path: inDir,
      outputDir: outDir,
      recipe: recipeFor('remove_background'),
    });
    await call(studio, 'folders.pause', { id: folder.id, paused: true });
    await Promise.all(
      Array.from({ length: count }, (_, i) => photo(path.join(inDir, `r${i}.jpg`), i * 100)),
    );
    const queued = await until(
      `${count} paused items`,
      allIn(studio, count, (i) => i.state === 'queued' && i.waitReason === 'paused'),
    );
    const resume = () => call(studio, 'folders.pause', { id: folder.id, paused: false });
    return { studio, inDir, resume, queued: queued.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  it('a paused folder holds its new photos as queued, saying why, until it is resumed', async () => {
    const { studio, resume, queued } = await pausedFolderWith(2);
    expect(queued.map((i) => [i.state, i.waitReason])).toEqual([
      ['queued', 'paused'],
      ['queued', 'paused'],
    ]);
    expect((await call(studio, 'folders.list', {}))[0]?.paused).toBe(true);
    await resume();
    await until(
      'both in review',
      allIn(studio, 2, (i) => i.state === 'review'),
    );
  });

  it('move-to-front puts the chosen item first in the queue', async () => {
    const { studio } = await pausedFolderWith(3);
    const before = (await items(studio)).map((i) => i.id);
    const last = before[2]!;
    expect(await call(studio, 'queue.moveToFront', { ids: [last] })).toEqual({ changed: 1 });
    expect((await items(studio)).map((i) => i.id)).toEqual([last, before[0], before[1]]);
  });

  it('cancel stops a queued photo (its source goes to failed/ with the reason) while the others run', async () => {
    const { studio, inDir, resume, queued } = await pausedFolderWith(3);
    const second = queued[1]!;
    expect(await call(studio, 'queue.cancel', { ids: [second.id] })).toEqual({ changed: 1 });
    await resume();
    await until('two in review, one cancelled', async () => {
      const list = await items(studio);
      return (
        list.filter((i) => i.state === 'review').length === 2 &&
        list.find((i) => i.id === second.id)?.state === 'cancelled'
      );
    });
    await until('the cancelled source in failed/', async () =>
      fs.existsSync(path.join(inDir, 'failed', 'r1.jpg.reason.txt')),
    );
    expect(fs.existsSync(path.join(inDir, 'failed', 'r1.jpg'))).toBe(true);
  });

  it('retry brings a cancelled photo back from failed/ and runs it', async () => {
    const { studio, inDir, resume, queued } = await pausedFolderWith(1);
    const only = queued[0]!;
    await call(studio, 'queue.cancel', { ids: [only.id] });
    await resume();
    await until('the cancelled source in failed/', async () =>
      fs.existsSync(path.join(inDir, 'failed', 'r0.jpg.reason.txt')),
    );
    expect(await call(studio, 'queue.retry', { ids: [only.id] })).toEqual({ changed: 1 });
    await until(
      'in review',
      allIn(studio, 1, (i) => i.state === 'review'),
    );
    expect(fs.existsSync(path.join(inDir, 'r0.jpg'))).toBe(true);
    expect(fs.existsSync(path.join(inDir, 'failed', 'r0.jpg'))).toBe(false);
    expect(fs.existsSync(path.join(inDir, 'failed', 'r0.jpg.reason.txt'))).toBe(false);
  });
});

describe('packs and ready shoots', () => {
  it('a catalog job keeps the shots that worked; retry runs the failed shot alone, paying only for it', async () => {
    // The service's backend fails the back view once (a provider hiccup), then works.
    const local = createLocalProvider({ catalog: loadCatalog() });
    let backViewFailures = 0;
    const flaky: ProviderAdapter = {
      name: 'local (back view fails once)',
      async run(job, ctx) {
        if (job.pose?.id === 'pose_back' && backViewFailures++ === 0)
          throw new Error('the backend dropped the back view');
        return local.run(job, ctx);
      },
    };
    const { studio, client, inDir, outDir } = await setup({ provider: flaky });
    const recipe = {
      request: { readyTemplateSetId: 'rts_studio_basics', images: { garment_photo: '{photo}' } },
      export: { preset: 'original', format: 'jpeg', quality: 90, naming: '{name}-{shot}' },
    };
    await call(studio, 'folders.add', { path: inDir, outputDir: outDir, recipe });
    const before = (await client.getAccount()).diamondBalance;
    await photo(path.join(inDir, 'dress.jpg'), 300);

    const [pack] = await until(
      'the pack in review',
      allIn(studio, 1, (i) => i.state === 'review'),
    );
    expect(pack).toMatchObject({
      packTotal: 4,
      packCompleted: 3,
      packFailed: 1,
      failedShots: ['shot_back'],
      diamonds: 16,
    });
    expect(
      (await call(studio, 'results.list', { itemId: pack!.id })).results.map((r) => r.shotId),
    ).toEqual(['shot_front', 'shot_three_quarter', 'shot_detail']);
    // A partial failure is not refunded (spec): 4 shots charged.
    expect((await client.getAccount()).diamondBalance).toBe(before - 16);

    expect(await call(studio, 'queue.retry', { ids: [pack!.id] })).toEqual({ changed: 1 });
    const list = await until('the retried shot in review', async () => {
      const all = await items(studio);
      return all.length === 2 && all.every((i) => i.state === 'review') ? all : undefined;
    });
    const retried = list.find((i) => i.id !== pack!.id)!;
    expect(retried).toMatchObject({
      packTotal: 1,
      packCompleted: 1,
      packFailed: 0,
      failedShots: [],
      diamonds: 4,
    });
    expect(
      (await call(studio, 'results.list', { itemId: retried.id })).results.map((r) => r.shotId),
    ).toEqual(['shot_back']);
    expect(list.find((i) => i.id === pack!.id)?.failedShots).toEqual([]);
    expect((await client.getAccount()).diamondBalance).toBe(before - 20);
    // Nothing left to retry: a second retry changes nothing and spends nothing.
    expect(await call(studio, 'queue.retry', { ids: [pack!.id] })).toEqual({ changed: 0 });
  });

  it('redo of a ready shoot whose results name their shots asks only the selected shots not already on their way, in one job for the photo', async () => {
    const { studio, client, inDir, outDir } = await setup();
    const recipe = {
      request: { readyTemplateSetId: 'rts_studio_basics', images: { garment_photo: '{photo}' } },
      export: { preset: 'original', format: 'jpeg', quality: 90, naming: '{name}-{shot}' },
    };
    await call(studio, 'folders.add', { path: inDir, outputDir: outDir, recipe });
    await photo(path.join(inDir, 'coat.jpg'), 20);
    const [shoot] = await until(
      'the shoot in review',
      allIn(studio, 1, (i) => i.state === 'review'),
    );
    const before = (await client.getAccount()).diamondBalance;
    const shots = (await call(studio, 'results.list', { itemId: shoot!.id })).results;
    expect(shots.map((r) => r.shotId).sort()).toEqual([
      'shot_back',
      'shot_detail',
      'shot_front',
      'shot_three_quarter',
    ]);
    const shot = (id: string) => shots.find((r) => r.shotId === id)!.id;
    const two = [shot('shot_detail'), shot('shot_back')];
    // Held queued, so every press below meets the redos before them still on their way.
    await call(studio, 'queue.pause', { paused: true });
    // Two shots at 4: one job for both, priced in the answer; pressed again, nothing more.
    expect(await call(studio, 'review.redo', { resultIds: two })).toEqual({
      queued: 1,
      alreadyQueued: 0,
      alreadyRedone: 0,
      diamonds: 8,
    });
    expect(await call(studio, 'review.redo', { resultIds: two })).toEqual({
      queued: 0,
      alreadyQueued: 1,
      alreadyRedone: 0,
      diamonds: 0,
    });
    // The back again with the front: only the front is asked (the back is on its way).
    expect(
      await call(studio, 'review.redo', { resultIds: [shot('shot_back'), shot('shot_front')] }),
    ).toEqual({ queued: 1, alreadyQueued: 0, alreadyRedone: 0, diamonds: 4 });
    await call(studio, 'queue.pause', { paused: false });
    const list = await until('the redone shots in review', async () => {
      const all = await items(studio);
      return all.length === 3 && all.every((i) => i.state === 'review') ? all : undefined;
    });
    const shotsOf = async (item: ItemView) =>
      (await call(studio, 'results.list', { itemId: item.id })).results.map((r) => r.shotId).sort();
    const [, both, front] = list.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    expect(both).toMatchObject({ packTotal: 2, diamonds: 8 });
    expect(await shotsOf(both!)).toEqual(['shot_back', 'shot_detail']);
    expect(front).toMatchObject({ packTotal: 1, diamonds: 4 });
    expect(await shotsOf(front!)).toEqual(['shot_front']);
    expect((await client.getAccount()).diamondBalance).toBe(before - 12);

    // Stale presses on the first shoot's results: the back, replaced by a delivered redo, asks
    // nothing; with the three-quarter (never redone), only the three-quarter is asked.
    expect(await call(studio, 'review.redo', { resultIds: [shot('shot_back')] })).toEqual({
      queued: 0,
      alreadyQueued: 0,
      alreadyRedone: 1,
      diamonds: 0,
    });
    const mixed = [shot('shot_back'), shot('shot_three_quarter')];
    expect(await call(studio, 'review.redoPrice', { resultIds: mixed, askPrices: true })).toEqual({
      queued: 1,
      alreadyQueued: 0,
      alreadyRedone: 0,
      diamonds: 4,
      whole: 0,
    });
    expect(await call(studio, 'review.redo', { resultIds: mixed })).toEqual({
      queued: 1,
      alreadyQueued: 0,
      alreadyRedone: 0,
      diamonds: 4,
    });
    const last = await until('the three-quarter redone', async () => {
      const all = (await items(studio)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      return all.length === 4 && all[3]!.state === 'review' ? all : undefined;
    });
    expect(await shotsOf(last[3]!)).toEqual(['shot_three_quarter']);
    // Every result of the first shoot is now declined: it is a decision, not a failure.
    expect(last[0]!.state).toBe('rejected');
    expect((await client.getAccount()).diamondBalance).toBe(before - 16);
  });
});
