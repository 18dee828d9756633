/**
 * A studio on a reference world with one real hot folder (the cut-out recipe) and one photo in it
 * generated and paid, waiting in review: the start of the tests of what an operator's action on a
 * paid photo may cost. Charges are read from the service's own ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { FolderView, ItemView } from '../../../src/shared/studio';
import { referenceWorld, studioOnWorld } from './reference-studio';
import { call, until } from './studio-commands';
import { CUTOUT_RECIPE } from './studio-fixtures';

export async function onePhotoInReview(cleanups: (() => Promise<void> | void)[], email: string) {
  const w = await referenceWorld(cleanups, {
    email,
    diamonds: 500,
    service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0 },
  });
  const studio = await studioOnWorld(w, cleanups);
  const hot = path.join(w.root, 'hot');
  fs.mkdirSync(hot);
  const folder = await call(studio, 'folders.add', {
    path: hot,
    outputDir: path.join(w.root, 'out'),
    recipe: CUTOUT_RECIPE,
  });
  const items = async () => (await call(studio, 'queue.list', { limit: 500 })).items as ItemView[];
  const charges = () => w.service.ledger(email).filter((e) => e.kind === 'charge');
  const spent = async () =>
    ((await call(studio, 'folders.list', {})) as FolderView[]).find((f) => f.id === folder.id)!
      .diamondsSpent;

  fs.copyFileSync(path.join(w.inDir, 'p0.jpg'), path.join(hot, 'p0.jpg'));
  const [inReview] = await until('the photo generated, in review', async () => {
    const all = await items();
    return all.length === 1 && all[0]!.state === 'review' && all;
  });
  expect(charges()).toHaveLength(1);
  return {
    w,
    studio,
    hot,
    items,
    charges,
    spent,
    inReview: inReview!,
    price: -charges()[0]!.delta,
  };
}
