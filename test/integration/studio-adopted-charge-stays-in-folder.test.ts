/**
 * A paid photo whose export failed, taken over by another hot folder (dropped there with the same
 * recipe: collected for nothing), keeps its charge in the folder that paid it: that folder's
 * reported spend and its ceiling still count it, the adopting folder spends nothing for it
 * (review rev19 F2: moved with the item, the charge counted in neither, and the paying folder's
 * ceiling let another photo in). Against the reference /v1 service, on the studio's real
 * database, through real hot folders; every charge is read from the service's own ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ACTIVE_STATES,
  type FolderView,
  type ItemView,
  type Recipe,
  type ResultView,
} from '../../src/shared/studio';
import { referenceWorld, studioOnWorld } from './helpers/reference-studio';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'adopted-ceiling@example.com';

/** One photo, one job at the reference's list price of 2 diamonds. */
const TWO_DIAMONDS: Recipe = {
  request: { toolId: 'amateur_to_pro', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

describe('a paid item adopted by another folder', () => {
  it('its charge stays in the spend and ceiling of the folder that paid it', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 500,
      photos: 3,
      service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0 },
    });
    const studio = await studioOnWorld(w, cleanups);
    const [hotA, outA, hotB, outB] = ['hot-a', 'out-a', 'hot-b', 'out-b'].map((d) =>
      path.join(w.root, d),
    );
    for (const dir of [hotA!, outA!, hotB!, outB!]) fs.mkdirSync(dir);
    // Room for two photos with their margins, not three.
    const a = await call(studio, 'folders.add', {
      path: hotA!,
      outputDir: outA!,
      recipe: TWO_DIAMONDS,
      maxDiamonds: 6,
    });
    const items = async () =>
      (await call(studio, 'queue.list', { limit: 500 })).items as ItemView[];
    const charges = () => w.service.ledger(EMAIL).filter((e) => e.kind === 'charge');
    const folders = async () => (await call(studio, 'folders.list', {})) as FolderView[];
    const settled = (list: ItemView[]) => !list.some((i) => ACTIVE_STATES.includes(i.state));

    // X and Y paid in A; their export fails (A's output folder became a file): failed, but paid.
    fs.rmSync(outA!, { recursive: true });
    fs.writeFileSync(outA!, 'not a folder');
    for (const f of ['p0.jpg', 'p1.jpg'])
      fs.copyFileSync(path.join(w.inDir, f), path.join(hotA!, f));
    const inReview = await until('X and Y in review', async () => {
      const list = await items();
      return list.length === 2 && list.every((i) => i.state === 'review') && list;
    });
    for (const item of inReview) {
      const results = (await call(studio, 'results.list', { itemId: item.id }))
        .results as ResultView[];
      await call(studio, 'review.set', { ids: results.map((r) => r.id), review: 'approved' });
    }
    await call(studio, 'export.run', { itemIds: inReview.map((i) => i.id) });
    await until('both exports failed', async () => {
      const list = await items();
      return list.every((i) => i.state === 'failed') && list;
    });
    expect(charges()).toHaveLength(2);
    const paid = charges().reduce((sum, e) => sum - e.delta, 0);
    expect(paid).toBe(4);
    expect((await folders()).find((f) => f.id === a.id)!.diamondsSpent).toBe(paid);

    // X dropped into folder B with the same recipe: B takes A's paid job over, for nothing.
    fs.rmSync(outA!);
    fs.mkdirSync(outA!);
    const b = await call(studio, 'folders.add', {
      path: hotB!,
      outputDir: outB!,
      recipe: TWO_DIAMONDS,
    });
    fs.copyFileSync(path.join(w.inDir, 'p0.jpg'), path.join(hotB!, 'p0.jpg'));
    const x = inReview.find((i) => i.name === 'p0.jpg')!;
    await until('X taken over by B and collected', async () => {
      const list = await items();
      const now = list.find((i) => i.id === x.id)!;
      return now.batchId !== x.batchId && now.state !== 'failed' && settled(list) && list;
    });
    expect(charges()).toHaveLength(2);
    // Before the fix: A 2 (X's charge gone with it), B 0.
    const spent = async (id: string) => (await folders()).find((f) => f.id === id)!.diamondsSpent;
    expect(await spent(a.id)).toBe(paid);
    expect(await spent(b.id)).toBe(0);

    // Z dropped into A: A's ceiling still holds X's charge, so Z waits; nothing is charged.
    fs.copyFileSync(path.join(w.inDir, 'p2.jpg'), path.join(hotA!, 'p2.jpg'));
    const z = await until('Z held or generated', async () => {
      const found = (await items()).find((i) => i.name === 'p2.jpg');
      return found && (found.waitReason === 'ceiling' || found.state === 'review') && found;
    });
    await new Promise((r) => setTimeout(r, 1500));
    // Before the fix: Z admitted and charged (A paid 3 photos, a ledger of 6, and reported 4).
    expect(charges()).toHaveLength(2);
    expect(z.waitReason).toBe('ceiling');
    expect(await spent(a.id)).toBe(paid);
  }, 120_000);
});
