/**
 * A photo the service refused at its create (a model id its catalog does not list: the embedded
 * catalog's 'fm_amara' on a remote service) was never charged, yet "Generate again" sent the same
 * refused recipe again after the operator had fixed the folder's (review uirev A2: 8 of 8 failed
 * again, 34 more requests). Such a photo now goes again with its folder's current recipe; a photo
 * that failed any other way keeps the one it was queued with. Against the reference /v1 service,
 * on the studio's real database, through a real hot folder; charges from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ACTIVE_STATES } from '../../src/shared/studio';
import { refusedInHotFolder, withModel } from './helpers/hot-folder-world';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('generate again after a refused request', () => {
  it('sends the folder’s fixed recipe, and the photo is made', async () => {
    const { studio, folder, items, charges, refused } = await refusedInHotFolder(
      cleanups,
      'retry-refused@example.com',
      2,
    );
    await call(studio, 'folders.setRecipe', { id: folder.id, recipe: withModel('person-001') });
    const ids = refused.map((i) => i.id);
    const price = (
      await call(studio, 'recipe.estimate', { recipe: withModel('person-001'), photos: 1 })
    ).diamonds;
    expect(await call(studio, 'queue.retryPrice', { ids })).toEqual({
      charged: 2,
      collected: 0,
      diamonds: 2 * price!,
    });
    expect(await call(studio, 'queue.retry', { ids })).toEqual({ changed: 2 });
    // The press queues them at once: they are settled when none is on its way any more.
    const settled = await until('both photos sent again', async () => {
      const all = await items();
      return all.every((i) => !ACTIVE_STATES.includes(i.state)) && all;
    });
    // Before the fix: both failed again with the same refusal, nothing charged.
    expect(settled.map((i) => i.state)).toEqual(['review', 'review']);
    expect(charges()).toHaveLength(2);
    for (const item of settled)
      expect((item.recipe.request as { images: Record<string, string> }).images.fashion_model).toBe(
        'person-001',
      );
  }, 120_000);

  it('does not send a photo again that a copy dropped after the fix already made (rev24 R5)', async () => {
    const { studio, folder, items, charges, refused, drop } = await refusedInHotFolder(
      cleanups,
      'retry-refused-twin@example.com',
      2,
    );
    await call(studio, 'folders.setRecipe', { id: folder.id, recipe: withModel('person-001') });
    // The operator drops p0 again under another name: made with the fixed recipe.
    drop(['p0.jpg', 'p0-again.jpg']);
    await until('the copy made', async () =>
      (await items()).some((i) => i.name === 'p0-again.jpg' && i.state === 'review'),
    );
    expect(charges()).toHaveLength(1);
    const ids = refused.map((i) => i.id);
    // Only p1 goes again: p0 with this recipe is the copy's.
    expect(await call(studio, 'queue.retryPrice', { ids })).toMatchObject({
      charged: 1,
      collected: 0,
    });
    expect(await call(studio, 'queue.retry', { ids })).toEqual({ changed: 1 });
    const settled = await until('p1 made', async () => {
      const all = await items();
      return all.every((i) => !ACTIVE_STATES.includes(i.state)) && all;
    });
    const byName = Object.fromEntries(settled.map((i) => [i.name, i]));
    expect(byName['p1.jpg']!.state).toBe('review');
    expect(byName['p0.jpg']!.state).toBe('failed');
    expect(byName['p0.jpg']!.note).toMatch(/not sent again: p0-again\.jpg is this photo/);
    // Before: p0 was sent again too, the same photo and recipe paid twice (3 charges).
    expect(charges()).toHaveLength(2);
  }, 120_000);
});
