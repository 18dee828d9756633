/**
 * A photo the studio moved to failed/ and the operator moves back into the hot folder is a new
 * drop: queued again with the folder's current recipe (review uirev A2: after the recipe was
 * fixed, files moved back from failed/ stayed failed; only renaming them worked). What was paid
 * for is not paid again. Against the reference /v1 service, on the studio's real database,
 * through a real hot folder; charges from the service's ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ACTIVE_STATES } from '../../src/shared/studio';
import { onePhotoInReview } from './helpers/one-photo-in-review';
import { refusedInHotFolder, withModel } from './helpers/hot-folder-world';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** Waits for the studio's move of `name` to failed/, then moves it back as an operator would. */
async function moveBackFromFailed(hot: string, name: string): Promise<void> {
  const failed = path.join(hot, 'failed', name);
  await until(`${name} moved to failed/`, () =>
    Promise.resolve(fs.existsSync(failed) && !fs.existsSync(path.join(hot, name))),
  );
  fs.renameSync(failed, path.join(hot, name));
}

describe('a file moved back from failed/ into its hot folder', () => {
  it('is taken again with the folder’s current recipe', async () => {
    const { studio, hot, folder, items, charges } = await refusedInHotFolder(
      cleanups,
      'moved-back@example.com',
    );
    await call(studio, 'folders.setRecipe', { id: folder.id, recipe: withModel('person-001') });
    await moveBackFromFailed(hot, 'p0.jpg');
    // Before the fix: nothing happened, the photo stayed failed and nothing was charged.
    const made = await until(
      'the moved-back photo made',
      async () => (await items()).find((i) => i.state === 'review'),
      30_000,
    );
    expect(made.name).toBe('p0.jpg');
    expect((made.recipe.request as { images: Record<string, string> }).images.fashion_model).toBe(
      'person-001',
    );
    expect(charges()).toHaveLength(1);
  }, 120_000);

  it('is not paid again when it was made already (cancelled in review)', async () => {
    const { studio, hot, items, charges, inReview } = await onePhotoInReview(
      cleanups,
      'moved-back-paid@example.com',
    );
    expect(await call(studio, 'queue.cancel', { ids: [inReview.id] })).toEqual({ changed: 1 });
    await moveBackFromFailed(hot, 'p0.jpg');
    const again = await until(
      'the moved-back photo settled',
      async () => {
        const all = await items();
        return (
          all.length === 2 &&
          !all.some((i) => ACTIVE_STATES.includes(i.state)) &&
          all.find((i) => i.id !== inReview.id)
        );
      },
      30_000,
    );
    // Give a wrongly queued photo the time to be charged.
    await new Promise((r) => setTimeout(r, 1500));
    expect(again.state).toBe('skipped');
    expect(again.note).toContain('cancelled');
    expect(charges()).toHaveLength(1);
  }, 120_000);
});
