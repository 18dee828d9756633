/**
 * A price confirmed by the balance (two agreeing readings from different windows) on a service
 * that charges its list, as the spec's normally does: a charge keeps its ceiling's margin until a
 * reading of the batch that agrees with the one before covers it, then it counts at that price. What a run says it spent is what the service's ledger shows. Against the reference
 * /v1 service (written from the spec alone) through `run`'s own path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { priceWorlds, photoFolders, plannedPrice, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'price-confirmed@ref.test';

const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

describe('a price confirmed by the balance', () => {
  it('charged at its list: once a reading of the batch agrees, the charges it read drop their margin', async () => {
    const w = await world({});
    const [first, second] = await photoFolders(w, [10, 10]);
    // Run 1: 4 + a margin of 1 a photo: four fit 20; one reading (16 for four) confirms nothing.
    const one = await runOnce(w, first!, { maxDiamonds: 20 });
    expect(netSpent(w)).toBeLessThanOrEqual(20);
    expect(one.exported).toBe(4);
    expect(one.diamondsSpent).toBe(netSpent(w));
    // Run 2: its first reading agrees with run 1's: the four charges count at 4, no margin (16).
    // A fifth photo keeps its margin until a reading covers its charge (the service may raise its
    // price meanwhile: studio-budget-price-rise): 4 + 1 does not fit the 4 left. Before 8d0c97d
    // the margins of the four never dropped; 8d0c97d started a fifth with no margin (20 spent).
    const two = await runOnce(w, second!, { maxDiamonds: 20 });
    expect(netSpent(w) - 16).toBe(16);
    expect(two.exported).toBe(4);
    expect(two.diamondsSpent).toBe(16);
    expect(two.held).toHaveLength(6);
    expect(await plannedPrice(w)).toEqual({ diamonds: 4, sure: false });
  }, 90_000);

  it("an app's debit in one reading: the next run's summary counts what the charges took", async () => {
    // Two photos at 4; an app spends 16 at the first poll: read as 12 a photo, once (an app's debit beyond WORST_RISE times the charges' plan is spent outside the run and learns nothing (studio-budget-spent-elsewhere): 16 is the most two photos at 4 can read as a rise).
    const w = await world({});
    const [first, second] = await photoFolders(w, [2, 3]);
    await runOnce(w, first!, { onFirstPoll: () => w.service.grant(EMAIL, -16) });
    expect(await plannedPrice(w)).toEqual({ diamonds: 12, sure: false });
    const spent = netSpent(w);
    // Run 2 (no ceiling) is planned at 12 a photo and reads 4: the photos cost 12, not 36.
    const two = await runOnce(w, second!);
    expect(two.exported).toBe(3);
    expect(netSpent(w) - spent).toBe(12);
    expect(two.diamondsSpent).toBe(12);
  }, 60_000);

  it("an app's debit in one reading holds no ceilinged run: one photo takes a fresh reading", async () => {
    const w = await world({});
    const [first, second] = await photoFolders(w, [2, 3]);
    // An app spends 16: read as 12 a photo (an app's debit beyond WORST_RISE times the charges' plan is spent outside the run and learns nothing (studio-budget-spent-elsewhere): 16 is the most two photos at 4 can read as a rise).
    await runOnce(w, first!, { onFirstPoll: () => w.service.grant(EMAIL, -16) });
    expect(await plannedPrice(w)).toEqual({ diamonds: 12, sure: false });
    const spent = netSpent(w);
    // 12 and its margin are above 14: before, nothing started for a day. One photo at the list
    // and its margin (5) reads 4: the plan comes down, the other two go; the ceiling is kept.
    const two = await runOnce(w, second!, { maxDiamonds: 14 });
    expect(two.exported).toBe(3);
    expect(netSpent(w) - spent).toBe(12);
    expect(two.diamondsSpent).toBe(12);
  }, 60_000);
});
