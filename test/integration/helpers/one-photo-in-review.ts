/**
 * A studio on a reference world with one real hot folder (the cut-out recipe) and one photo in it
 * generated and paid, waiting in review: the start of the tests of what an operator's action on a
 * paid photo may cost. Charges are read from the service's own ledger.
 */
import { expect } from 'vitest';
import { hotFolderWorld } from './hot-folder-world';
import { until } from './studio-commands';
import { CUTOUT_RECIPE } from './studio-fixtures';

export async function onePhotoInReview(cleanups: (() => Promise<void> | void)[], email: string) {
  const world = await hotFolderWorld(cleanups, email, CUTOUT_RECIPE);
  world.drop(['p0.jpg']);
  const [inReview] = await until('the photo generated, in review', async () => {
    const all = await world.items();
    return all.length === 1 && all[0]!.state === 'review' && all;
  });
  expect(world.charges()).toHaveLength(1);
  return { ...world, inReview: inReview!, price: -world.charges()[0]!.delta };
}
