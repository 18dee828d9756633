/**
 * A price two balance readings agreed on, then raised by the service (spec §2.1: resolved per
 * request) to WORST_RISE times it. Before, a confirmed price let every photo the reservations
 * fitted go before any reading (review rev13 E2: list 4 confirmed, then 12 from the 4th create,
 * --max-diamonds 40: 72 taken, reported 72). Near the ceiling the photos go as for a price no
 * reading confirmed: a rise up to WORST_RISE cannot cross it; far from it nothing waits. Against
 * the reference /v1 service (written from the spec alone) through `run`'s own path; money is
 * checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce, withEngine } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'rise-after-confirmed@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 1000);

/** virtual_model's price as the studio's readings left it (the ON_MODEL recipe's tool). */
const reading = (w: Awaited<ReturnType<typeof world>>) =>
  withEngine(w, (e) => e.spending.readPrice('virtual_model'));

/** Two runs of two photos, no ceiling: their closing readings agree on the list (4). */
async function confirmedAtList(w: Awaited<ReturnType<typeof world>>, folders: string[]) {
  await runOnce(w, folders[0]!);
  await runOnce(w, folders[1]!);
  expect(await reading(w)).toEqual({ diamonds: 4, confirmed: true });
}

const accountReads = (w: Awaited<ReturnType<typeof world>>) =>
  w.service.requests().filter((r) => r.method === 'GET' && r.path === '/v1/account').length;

describe('a confirmed price that then rises to WORST_RISE times it', () => {
  it('risen before the run: the ceiling holds, the rise is learnt, the summary is what was taken', async () => {
    const w = await world({});
    const [a, b, photos] = await photoFolders(w, [2, 2, 12]);
    await confirmedAtList(w, [a!, b!]);
    const before = netSpent(w);
    w.service.setOptions({ chargeExtra: 8 });
    const summary = await runOnce(w, photos!, { maxDiamonds: 40, concurrency: 2 });
    const spent = netSpent(w) - before;
    // Before: 8 photos at 12 went before any reading (96 taken under 40).
    expect(spent).toBeLessThanOrEqual(40);
    expect(summary.exported).toBeGreaterThanOrEqual(3);
    expect(summary.diamondsSpent).toBe(spent);
    expect((await reading(w))?.diamonds).toBe(12);
  }, 90_000);

  it('risen during the run, after readings confirmed the list (rev13 E2): the ceiling holds', async () => {
    const w = await world({});
    const [a, b, photos] = await photoFolders(w, [2, 2, 12]);
    await confirmedAtList(w, [a!, b!]);
    const before = netSpent(w);
    const summary = await runOnce(w, photos!, {
      maxDiamonds: 40,
      concurrency: 2,
      afterCreate: { n: 3, fn: () => w.service.setOptions({ chargeExtra: 8 }) },
    });
    const spent = netSpent(w) - before;
    // Before: 3 at 4 and 5 at 12 went before a reading showed the rise (72 under 40).
    expect(spent).toBeLessThanOrEqual(40);
    // Never under what was taken. A reading whose window holds a charge at 4 and one at 12 may
    // count the first at the risen price (CI under load: 44 reported for 36): over by one photo's
    // rise at most (the over-reporting left from review rev13 E5).
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(spent);
    expect(summary.diamondsSpent).toBeLessThanOrEqual(spent + 8);
  }, 90_000);

  it('stable and far from the ceiling: no reading between the opening and the closing one', async () => {
    const w = await world({});
    const [a, b, photos] = await photoFolders(w, [2, 2, 12]);
    await confirmedAtList(w, [a!, b!]);
    const before = netSpent(w);
    const reads = accountReads(w);
    const summary = await runOnce(w, photos!, { maxDiamonds: 400 });
    expect(summary.exported).toBe(12);
    expect(netSpent(w) - before).toBe(48);
    expect(summary.diamondsSpent).toBe(48);
    expect(accountReads(w) - reads).toBe(2);
  }, 90_000);
});
