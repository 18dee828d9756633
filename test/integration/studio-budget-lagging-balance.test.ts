/**
 * A balance read that shows charges late (a cached or lagging read; spec §2.9 does not say
 * diamondBalance is current): a reading below its charges' list prices is read again, waiting
 * longer each time, before it is taken for a credit; once it shows the drop, the charges are
 * attributed as any reading's. `--max-diamonds` holds and the summary says what was taken.
 * Against the reference /v1 service through `run`'s own path; money is checked from its ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'lagging-balance@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

describe('a balance that shows charges 1.5 s late', () => {
  it('virtual_model (list 4, charged 4), six photos two at once, --max-diamonds 40: all go, the summary says what was taken', async () => {
    const w = await world({ balanceLagMs: 1_500 });
    const [photos] = await photoFolders(w, [6]);
    // Readings below the list are read again from 0.5 s on (0.5, 1, 2, 4 s).
    const summary = await runOnce(w, photos!, {
      maxDiamonds: 40,
      concurrency: 2,
      balanceRecheckMs: 1_000,
    });
    const spent = netSpent(w);
    // Before: each reading that did not show its charges yet was taken for a credit hiding them,
    // each counted at WORST_RISE x 4: 12 taken, the other photos held at the ceiling.
    expect(spent).toBe(24);
    expect(summary.exported).toBe(6);
    expect(summary.held).toEqual([]);
    expect(summary.diamondsSpent).toBe(spent);
  }, 120_000);
});

describe("the run's own failed jobs, refunded by the service (spec 3.1)", () => {
  it('a refund of a job charged before the last reading is not taken for a credit: no re-reads, the summary says what was taken', async () => {
    const w = await world({ failJobs: 0.5 });
    const [photos] = await photoFolders(w, [6]);
    const accountReads = { failAfter: Infinity, seen: 0 };
    const summary = await runOnce(w, photos!, {
      maxDiamonds: 40,
      concurrency: 2,
      balanceRecheckMs: 1_000,
      accountReads,
    });
    const spent = netSpent(w);
    expect(summary.failed.length).toBeGreaterThan(0);
    // Before: the refunds in a window read as a credit: re-read 4 times each (about 75 s at the
    // defaults), the charges counted at their bound (20 reported for 12 taken).
    expect(summary.diamondsSpent).toBe(spent);
    expect((summary.notices ?? []).join(' ')).not.toMatch(/credited/);
    expect(accountReads.seen).toBeLessThanOrEqual(8);
  }, 120_000);
});
