/**
 * A studio on a reference world with one real hot folder of a recipe, and how the tests read it:
 * its items, the service's own ledger of charges, and dropping the world's photos in as an
 * operator would.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { FolderView, ItemView, Recipe } from '../../../src/shared/studio';
import { referenceWorld, studioOnWorld } from './reference-studio';
import { call, until } from './studio-commands';

type Cleanups = (() => Promise<void> | void)[];

export async function hotFolderWorld(
  cleanups: Cleanups,
  email: string,
  recipe: Recipe,
  photos = 1,
) {
  const w = await referenceWorld(cleanups, {
    email,
    diamonds: 500,
    photos,
    service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0 },
  });
  const studio = await studioOnWorld(w, cleanups);
  const hot = path.join(w.root, 'hot');
  fs.mkdirSync(hot);
  const folder = await call(studio, 'folders.add', {
    path: hot,
    outputDir: path.join(w.root, 'out'),
    recipe,
  });
  const items = async () => (await call(studio, 'queue.list', { limit: 500 })).items as ItemView[];
  const charges = () => w.service.ledger(email).filter((e) => e.kind === 'charge');
  const spent = async () =>
    ((await call(studio, 'folders.list', {})) as FolderView[]).find((f) => f.id === folder.id)!
      .diamondsSpent;
  /** Copies the world's photos (p0.jpg, p1.jpg…) into the hot folder, under these names. */
  const drop = (...names: [from: string, as?: string][]) => {
    for (const [from, as] of names)
      fs.copyFileSync(path.join(w.inDir, from), path.join(hot, as ?? from));
  };
  return { w, studio, hot, folder, items, charges, spent, drop };
}

/** The virtual_model recipe with this fashion model. */
export const withModel = (fashionModel: string): Recipe => ({
  request: {
    toolId: 'virtual_model',
    images: { garment_photo: '{photo}', fashion_model: fashionModel },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
});

/**
 * A hot folder whose recipe names 'fm_amara' (the embedded catalog's model, which the reference
 * service does not list) and `photos` photos dropped in and refused at their create, nothing
 * charged: the start of the cases where the operator fixes the recipe.
 */
export async function refusedInHotFolder(cleanups: Cleanups, email: string, photos = 1) {
  const world = await hotFolderWorld(cleanups, email, withModel('fm_amara'), photos);
  world.drop(...Array.from({ length: photos }, (_, i): [string] => [`p${i}.jpg`]));
  const refused = await until('the photos refused', async () => {
    const all = await world.items();
    return all.length === photos && all.every((i) => i.state === 'failed') && all;
  });
  expect(refused[0]!.error).toMatch(/fm_amara/);
  expect(world.charges()).toHaveLength(0);
  return { ...world, refused };
}
