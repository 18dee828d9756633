/**
 * A price read from the shared balance (spec §1 rule 2: the service's own apps spend and credit
 * it too) keeps a ceiling's margin until a reading of the same batch agrees with the one before
 * (a price the service names drops it at once). A reading above
 * the plan raises it, also for a price confirmed before or stored by an earlier version; a charge
 * is never counted below what it was planned at; an app's debit read once stops ceilinged runs
 * only until a later reading (or a day). Against the reference /v1 service (written from the
 * spec alone) through `run`'s own path; money is checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as store from '../../src/studio/db/store';
import { priceWorlds, photoFolders, runOnce, withEngine } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'price-reading@ref.test';

const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

describe('a price read from the balance', () => {
  it('confirmed by two readings, then charged dearer: the ceiling holds on every run', async () => {
    const w = await world({});
    const [a, b, c, d] = await photoFolders(w, [2, 2, 6, 6]);
    await runOnce(w, a!);
    await runOnce(w, b!);
    expect(netSpent(w)).toBe(16);
    // The service now charges 6 (list still 4). Before: 4 was sure, run 3 and run 4 took 18 each.
    w.service.setOptions({ chargeExtra: 2 });
    await runOnce(w, c!, { maxDiamonds: 12 });
    expect(netSpent(w) - 16).toBeLessThanOrEqual(12);
    const before4 = netSpent(w);
    const four = await runOnce(w, d!, { maxDiamonds: 12 });
    expect(netSpent(w) - before4).toBeLessThanOrEqual(12);
    expect(four.exported).toBeGreaterThanOrEqual(1);
    expect(await withEngine(w, (e) => e.spending.toolPrice('virtual_model'))).toEqual({
      diamonds: 6,
      sure: false,
    });
  }, 90_000);

  it('stored unmarked by an earlier version counts as one unconfirmed reading', async () => {
    const w = await world({ chargeExtra: 2 });
    const [a] = await photoFolders(w, [4]);
    // The version before 72c810d stored a credit-masked 4 (the list) as the price: `price:` 4.
    await withEngine(w, (e) =>
      store.setSetting(e.db, `price:${e.spending.key}:virtual_model`, '4'),
    );
    expect(await withEngine(w, (e) => e.spending.toolPrice('virtual_model'))).toEqual({
      diamonds: 4,
      sure: false,
    });
    // Before: 4 sure, three photos admitted under 12: 18 spent.
    await runOnce(w, a!, { maxDiamonds: 12 });
    expect(netSpent(w)).toBeLessThanOrEqual(12);
  }, 60_000);

  it('masked by a credit within the run: charges are not counted below their plan, the ceiling holds', async () => {
    // Charged 6 (list 4); the service's own apps credit 4 after the 2nd create: the balance shows
    // 8 for two charges, the list price.
    const w = await world({ chargeExtra: 2 });
    const [a] = await photoFolders(w, [4]);
    const one = await runOnce(w, a!, {
      maxDiamonds: 14,
      afterCreate: { n: 2, fn: () => w.service.grant(EMAIL, 4) },
    });
    // Before: 4 + 4 sure, the margins freed, a third photo admitted: 18 charged under 14.
    expect(netSpent(w)).toBeLessThanOrEqual(14);
    expect(one.exported).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("an app's debit read once: a later reading lowers the plan; unconfirmed, it lapses after a day", async () => {
    const w = await world({});
    const [a, b, c] = await photoFolders(w, [2, 3, 2]);
    // Two photos at 4; an app spends 16 at the first poll: read as 12 a photo (an app's debit beyond WORST_RISE times the charges' plan is spent outside the run and learns nothing (studio-budget-spent-elsewhere): 16 is the most two photos at 4 can read as a rise).
    await runOnce(w, a!, { onFirstPoll: () => w.service.grant(EMAIL, -16) });
    expect((await withEngine(w, (e) => e.spending.toolPrice('virtual_model'))).diamonds).toBe(12);
    // Under 4 not even a photo at the list (and its margin) fits to take a fresh reading.
    const held = await runOnce(w, b!, { maxDiamonds: 4 });
    expect(held.exported).toBe(0);
    // Nothing was spent: the hold names the unconfirmed price, not a reached ceiling.
    expect(held.held[0]?.reason).toMatch(
      /price is unconfirmed \(12 diamond\(s\) from one balance reading/,
    );
    // A day later the reading, never confirmed, has lapsed: the list plans again.
    const tomorrow = () => new Date(Date.now() + 25 * 60 * 60_000);
    expect(await withEngine(w, (e) => e.spending.toolPrice('virtual_model'), tomorrow)).toEqual({
      diamonds: 4,
      sure: false,
    });
    // A run without a ceiling reads 4: the plan comes down, the next ceilinged run goes.
    await runOnce(w, c!);
    expect(await withEngine(w, (e) => e.spending.toolPrice('virtual_model'))).toEqual({
      diamonds: 4,
      sure: false,
    });
    const spent = netSpent(w);
    // The photos held by run 2 (taken over by this run, never paid twice).
    const next = await runOnce(w, b!, { maxDiamonds: 20 });
    expect(next.exported).toBe(3);
    expect(netSpent(w) - spent).toBe(12);
  }, 90_000);
});
