/**
 * The owner spends diamonds in the service's own app during a run (spec §1 rule 2: the balance is
 * shared): a reading that dropped beyond what its charges could take (WORST_RISE times their
 * plan) does not pin the excess on them, learns no price from it, tells it apart in the summary,
 * and does not close `--max-diamonds`. Against the reference /v1 service through `run`'s own
 * path; money is checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, plannedPrice, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'spent-elsewhere@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

/** `run` of ON_MODEL (list 4, charged 4) over six photos, two at once; the app spends `amount` after the 2nd create. */
async function appSpendsDuringRun(amount: number, maxDiamonds?: number) {
  const w = await world({});
  const [photos] = await photoFolders(w, [6]);
  const summary = await runOnce(w, photos!, {
    concurrency: 2,
    ...(maxDiamonds !== undefined ? { maxDiamonds } : {}),
    afterCreate: { n: 2, fn: () => w.service.grant(EMAIL, -amount) },
  });
  return { w, spent: netSpent(w), summary };
}

const outsideNotice = (summary: { notices?: string[] }) =>
  (summary.notices ?? []).find((n) => n.includes('left the balance outside this run'));

describe("diamonds spent in the service's own app during a run", () => {
  it('no ceiling: the summary tells the run spend and the outside spend apart', async () => {
    const { w, spent, summary } = await appSpendsDuringRun(60);
    // Before: 24 charged, diamondsSpent 84, no notice.
    expect(summary.exported).toBe(6);
    expect(spent).toBe(24);
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(spent);
    expect(summary.diamondsSpent).toBeLessThan(spent + 60);
    expect(outsideNotice(summary)).toBeDefined();
    // No price is learnt from the reading the app's spend was in.
    expect((await plannedPrice(w)).diamonds).toBe(4);
  }, 90_000);

  it('--max-diamonds 40: the outside spend does not close the ceiling', async () => {
    const { spent, summary } = await appSpendsDuringRun(60, 40);
    // Before: 4 exported, 16 charged, 2 held at the ceiling, 76 reported.
    expect(spent).toBeLessThanOrEqual(40);
    expect(summary.exported).toBe(6);
    expect(summary.held).toEqual([]);
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(spent);
    expect(summary.diamondsSpent).toBeLessThanOrEqual(40);
    expect(outsideNotice(summary)).toBeDefined();
  }, 90_000);

  it('the app drains the balance after the first create: the run is not said to have spent it, and no price is learnt', async () => {
    const w = await world({ drainBalanceAfterFirstCreate: true });
    const [photos] = await photoFolders(w, [3]);
    const summary = await runOnce(w, photos!, { concurrency: 1 });
    const spent = netSpent(w);
    // Before: 4 charged, diamondsSpent 400 (the whole balance), and the next run planned "about
    // 400 diamond(s) each".
    expect(spent).toBe(4);
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(spent);
    expect(summary.diamondsSpent).toBeLessThanOrEqual(3 * spent);
    expect(outsideNotice(summary)).toBeDefined();
    expect((await plannedPrice(w)).diamonds).toBe(4);
  }, 90_000);

  it('a price beyond the bound in every reading is a rise, not spend outside: the summary says what was taken', async () => {
    // ON_MODEL listed 4, charged 16 from the first create: past WORST_RISE times the plan, far
    // past "differ slightly" (spec §2.1), but the ceiling is the promise to the customer.
    const w = await world({ chargeExtra: 12 });
    const [photos] = await photoFolders(w, [8]);
    const summary = await runOnce(w, photos!, { concurrency: 2, maxDiamonds: 40 });
    const spent = netSpent(w);
    // Before: every reading told the excess apart as spent in the apps: 48 taken, 36 reported.
    // Now the second reading beyond the bound is a rise: 48 taken (the first one's photos crossed
    // by one round), 48 reported.
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(spent);
    expect(spent).toBeLessThanOrEqual(48);
  }, 90_000);
});
