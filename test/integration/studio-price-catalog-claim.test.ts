/**
 * A catalog job's diamondCost is the service's claim, not proof (spec §4.10 names the field, not
 * its meaning; §2.1 lets the price move per request): its charges are checked by the balance
 * reading that covers them, so a diamondCost below the charge never takes a run past
 * `--max-diamonds`. Against the reference /v1 service (written from the spec alone) through
 * `run`'s own path, with catalogDiamondCostPerShot (diamondCost names one shot's price); money is
 * checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { netSpent, photoFolders, runOnce } from './helpers/price-reading-studio';
import { referenceWorld } from './helpers/reference-studio';
import { SHOOT_02_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'price-catalog-claim@ref.test';

describe("a ready shoot's diamondCost", () => {
  it('naming one shot (3) while 9 is charged: the balance reading shows it and the ceiling holds', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 300,
      service: { seed: 11, timeScale: 0.01, catalogDiamondCostPerShot: true },
    });
    const [photos] = await photoFolders(w, [10]);
    const run = await runOnce(w, photos!, { maxDiamonds: 60, recipe: SHOOT_02_RECIPE });
    // Before: the diamondCost (3, one shot a photo) was counted exact and never read from the
    // balance: ten photos at 9, 90 under 60. Now a claim no reading showed plans at the dearest
    // image tool (6 a shot) with its margin: two go, their reading shows 9 a photo, and three
    // more fit at 9 and its margin.
    expect(netSpent(w, EMAIL)).toBeLessThanOrEqual(60);
    expect(netSpent(w, EMAIL)).toBe(45);
    expect(run.exported).toBe(5);
    expect(run.diamondsSpent).toBe(45);
    expect(run.held).toHaveLength(5);
  }, 90_000);

  it('naming the charge: a reading that agrees keeps the spend exact', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 300,
      service: { seed: 11, timeScale: 0.01 },
    });
    const [photos] = await photoFolders(w, [6]);
    const run = await runOnce(w, photos!, { maxDiamonds: 100, recipe: SHOOT_02_RECIPE });
    expect(run.exported).toBe(6);
    expect(netSpent(w, EMAIL)).toBe(54);
    expect(run.diamondsSpent).toBe(54);
  }, 90_000);
});
