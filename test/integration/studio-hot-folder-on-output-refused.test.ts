/**
 * A hot folder laid on exports is refused before it spends anything: the output folder of another
 * hot folder (or a folder inside it), a folder holding another folder's output, and the output
 * folder of an earlier run (review uirev A1: "incoming-export" was accepted as a hot folder and
 * its 8 exports were paid for again, 32 diamonds in seconds). Against the reference /v1 service,
 * on the studio's real database; every charge is read from the service's own ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FolderView, Recipe } from '../../src/shared/studio';
import { referenceWorld, runOnWorld, studioOnWorld } from './helpers/reference-studio';
import { call } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'hot-on-output@example.com';

const TWO_DIAMONDS: Recipe = {
  request: { toolId: 'amateur_to_pro', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

describe('a hot folder on exports', () => {
  it('is refused, naming the folder whose output it is, and nothing is spent', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 500,
      photos: 2,
      service: { seed: 3, timeScale: 0.01, jobSeconds: [1, 1], failShots: 0 },
    });
    const runOut = path.join(w.root, 'run-out');
    const run = await runOnWorld(w, { folders: { inDir: w.inDir, outDir: runOut } });
    expect(run.exported).toBe(2);
    expect(fs.readdirSync(runOut).length).toBeGreaterThan(0);

    const studio = await studioOnWorld(w, cleanups);
    const [hotA, outA, hotB, wrap] = ['hot-a', 'hot-a-export', 'hot-b', 'wrap'].map((d) =>
      path.join(w.root, d),
    );
    const outB = path.join(wrap!, 'hot-b-export');
    for (const dir of [hotA!, outA!, hotB!, outB]) fs.mkdirSync(dir, { recursive: true });
    // hot-a's exports, as its earlier photos left them.
    for (const f of fs.readdirSync(w.inDir))
      fs.copyFileSync(path.join(w.inDir, f), path.join(outA!, `export-${f}`));
    fs.mkdirSync(path.join(outA!, 'summer'));
    await call(studio, 'folders.add', { path: hotA!, outputDir: outA!, recipe: TWO_DIAMONDS });
    await call(studio, 'folders.add', { path: hotB!, outputDir: outB, recipe: TWO_DIAMONDS });
    const charges = () => w.service.ledger(EMAIL).filter((e) => e.kind === 'charge').length;
    const chargedBefore = charges();

    const add = (hot: string) =>
      call(studio, 'folders.add', { path: hot, outputDir: `${hot}-out`, recipe: TWO_DIAMONDS });
    await expect(add(outA!)).rejects.toThrow(
      new RegExp(`is the output folder ${outA} of the hot folder ${hotA}`),
    );
    await expect(add(path.join(outA!, 'summer'))).rejects.toThrow(
      new RegExp(`is inside the output folder ${outA} of the hot folder ${hotA}`),
    );
    await expect(add(wrap!)).rejects.toThrow(
      new RegExp(`contains the output folder ${outB} of the hot folder ${hotB}`),
    );
    await expect(add(runOut)).rejects.toThrow(
      new RegExp(`is the output folder ${runOut} of an earlier run`),
    );
    // A folder next to them is still taken.
    const beside = path.join(w.root, 'beside');
    fs.mkdirSync(beside);
    await add(beside);

    const folders = (await call(studio, 'folders.list', {})) as FolderView[];
    expect(folders.map((f) => f.path).sort()).toEqual([beside, hotA, hotB].sort());
    const queued = (await call(studio, 'queue.list', { limit: 500 })).items;
    expect(queued.filter((i) => i.folderId !== null)).toHaveLength(0);
    expect(charges()).toBe(chargedBefore);
  });
});
