/**
 * Generate again is priced by what it will really charge: a photo whose job was refunded is sent
 * again (paid), one whose job is already paid and only needs collecting (here: charged, then
 * answered with a status the spec does not name and no results, held as paid) is collected at no
 * charge. Against the reference /v1 service, on the studio's real database; the price the studio
 * states before the press is checked against the service's own ledger after it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ACTIVE_STATES, type ItemView } from '../../src/shared/studio';
import { referenceWorld, runOnWorld, studioOnWorld } from './helpers/reference-studio';
import { CUTOUT_RECIPE, SHOOT_02_RECIPE } from './helpers/studio-fixtures';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'retry-price@example.com';

describe('generate again', () => {
  it('states the price of what is sent again only; what is already paid is collected for nothing', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 500,
      photos: 2,
      service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0, failJobs: 1 },
    });
    const net = () =>
      w.service
        .ledger(EMAIL)
        .filter((e) => e.kind === 'charge' || e.kind === 'refund')
        .reduce((sum, e) => sum - e.delta, 0);
    // Cut-outs refunded (failed: sent again, paid); the shoots charged and held as paid.
    expect((await runOnWorld(w, { recipe: CUTOUT_RECIPE })).failed).toHaveLength(2);
    expect(net()).toBe(0);
    w.service.setOptions({
      failJobs: 0,
      completedAnsweredAs: { status: 'expired', errorMessage: 'results no longer available' },
    });
    expect((await runOnWorld(w, { recipe: SHOOT_02_RECIPE })).failed).toHaveLength(2);
    const paidBefore = net();
    expect(paidBefore).toBeGreaterThan(0);
    w.service.setOptions({ completedAnsweredAs: undefined });

    const studio = await studioOnWorld(w, cleanups);
    const items = async () =>
      (await call(studio, 'queue.list', { limit: 500 })).items as ItemView[];
    const failed = (await items()).filter((i) => i.state === 'failed');
    expect(failed).toHaveLength(4);
    const cutoutPrice = (
      await call(studio, 'recipe.estimate', { recipe: CUTOUT_RECIPE, photos: 1 })
    ).diamonds;
    expect(cutoutPrice).toBeGreaterThan(0);

    // Before the press: 2 photos charged at the cut-out's price, 2 collected; nothing sent.
    const ids = failed.map((i) => i.id);
    expect(await call(studio, 'queue.retryPrice', { ids })).toEqual({
      charged: 2,
      collected: 2,
      diamonds: 2 * cutoutPrice,
    });
    expect(net()).toBe(paidBefore);

    // The press: what the service charges is what was stated.
    expect(await call(studio, 'queue.retry', { ids })).toEqual({ changed: 4 });
    await until('every photo generated again or collected', async () => {
      const all = await items();
      return all.every((i) => !ACTIVE_STATES.includes(i.state) && i.state !== 'failed');
    });
    expect(net() - paidBefore).toBe(2 * cutoutPrice);
    expect(w.service.jobs(EMAIL).length).toBe(6);
  }, 120_000);
});
