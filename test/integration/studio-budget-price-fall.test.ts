/**
 * The price charged falls below the list (spec §2.1: resolved per request, can differ): a reading
 * showing less than the list prices cannot tell a fall from a credit that hid the charges, so the
 * first is counted at the bound (`--max-diamonds` stays safe from a credit hiding a charge); a
 * later reading (this run or the next) that shows the same lower amount per charge again, the
 * jobs of both seen completed, is the price fallen, and its charges count it (review rev15 PR1:
 * each counted at the bound for good, reported far over the ledger). Against the reference /v1 service through
 * `run`'s own path; money is checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'price-fall@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

describe('a price that falls below the list', () => {
  it('listed 6, charged 6 twice then 4, --max-diamonds 30, two runs: the ceiling holds; the second run, its readings agreeing with the first run, reports what was taken', async () => {
    // virtual_model listed at 6 and charged 4 + 2, then 4 from the third create on.
    const w = await world({ listedPrices: { virtual_model: 6 }, chargeExtra: 2 });
    const [photos] = await photoFolders(w, [6]);
    const fall = { n: 2, fn: () => w.service.setOptions({ chargeExtra: 0 }) };
    const run1 = await runOnce(w, photos!, { maxDiamonds: 30, afterCreate: fall });
    const spent1 = netSpent(w);
    expect(spent1).toBeLessThanOrEqual(30);
    // One reading below the list: a fall, a refund or a credit, counted at the bound (never
    // below the ledger).
    expect(run1.diamondsSpent).toBeGreaterThanOrEqual(spent1);
    expect(run1.exported).toBe(3);

    const run2 = await runOnce(w, photos!, { maxDiamonds: 30, afterCreate: fall });
    const spent2 = netSpent(w) - spent1;
    expect(spent2).toBeLessThanOrEqual(30);
    expect(run2.exported).toBeGreaterThanOrEqual(2);
    // Before: each of its charges (4) read like the one before, counted at the bound again (18):
    // 36 reported for 8.
    expect(run2.diamondsSpent).toBe(spent2);
  }, 120_000);
});
