/**
 * A thumbnail dropped by mistake is not paid for: a photo under the minimum size fails before its
 * upload, with the reason, nothing charged (review uirev A3: a 96×128 photo was uploaded, charged
 * 4 diamonds and put up for review without a word). An upscale takes it. Against the reference
 * /v1 service through a real hot folder; charges from the service's ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import { hotFolderWorld, withModel } from './helpers/hot-folder-world';
import { until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/**
 * The world's first photo shrunk to a 96×128 thumbnail, dropped beside it: stored 128×96 and
 * turned upright by its EXIF orientation, as cameras do.
 */
async function dropThumbnail(w: { inDir: string }, hot: string): Promise<void> {
  const thumb = await sharp(path.join(w.inDir, 'p0.jpg'))
    .resize(128, 96)
    .withMetadata({ orientation: 6 })
    .jpeg()
    .toBuffer();
  fs.writeFileSync(path.join(hot, 'thumb.jpg'), thumb);
}

it('a 96×128 photo fails before its upload with the reason, nothing charged; a full one is made', async () => {
  const { w, hot, items, charges, drop } = await hotFolderWorld(
    cleanups,
    'too-small@example.com',
    withModel('person-001'),
  );
  await dropThumbnail(w, hot);
  drop(['p0.jpg']);
  const settled = await until('both photos settled', async () => {
    const all = await items();
    return (
      all.length === 2 && all.every((i) => i.state === 'failed' || i.state === 'review') && all
    );
  });
  const thumb = settled.find((i) => i.name === 'thumb.jpg')!;
  // Before the fix: review, charged.
  expect(thumb.state).toBe('failed');
  expect(thumb.error).toMatch(/96×128 px, too small for virtual_model/);
  expect(thumb.diamonds).toBe(0);
  expect(settled.find((i) => i.name === 'p0.jpg')!.state).toBe('review');
  expect(charges()).toHaveLength(1);
  await until('the thumbnail moved to failed/ with its reason', () =>
    Promise.resolve(fs.existsSync(path.join(hot, 'failed', 'thumb.jpg.reason.txt'))),
  );
}, 120_000);

it('an upscale takes a small photo', async () => {
  const upscale: Recipe = {
    request: { toolId: 'photo_enhance', images: { user_photo: '{photo}' } },
    export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
  };
  const { w, hot, items, charges } = await hotFolderWorld(
    cleanups,
    'upscale-small@example.com',
    upscale,
  );
  await dropThumbnail(w, hot);
  const made = await until('the thumbnail upscaled', async () =>
    (await items()).find((i) => i.state === 'review'),
  );
  expect(made.name).toBe('thumb.jpg');
  expect(charges()).toHaveLength(1);
}, 120_000);
