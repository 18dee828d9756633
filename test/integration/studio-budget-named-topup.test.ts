/**
 * A price a 402 named inside the batch (spec §4.6: the amount at that moment) while `run --wait`
 * waits for the customer's top-up: the top-up credits the shared balance (spec §1 rule 2) in the
 * window of the next reading, so that reading cannot tell what the charges cost, and the price may
 * rise before it (spec §2.1: resolved per request). `--max-diamonds` must hold and the summary must
 * not say less than was taken. Against the reference /v1 service (written from the spec alone)
 * through `run`'s own path; money is checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'named-topup@ref.test';

// Balance 3: the first create is refused, 'required 5' (virtual_model lists 4, charged 5).
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 3);

/**
 * `run --wait --max-diamonds` over `inDir`; once the service has refused a create 402, the
 * customer tops up 100 and the service charges `extraAfterTopUp` over the list (after `rise.n`
 * creates answered, `rise.extra`, with `rise.grant` credited then).
 */
async function runWaitingForTopUp(
  w: ReferenceWorld,
  inDir: string,
  maxDiamonds: number,
  extraAfterTopUp: number,
  rise?: { n: number; extra: number; grant?: number },
) {
  let refusedAt = 0;
  const topUp = setInterval(() => {
    // The photos on their way are all refused before the customer tops up (near the ceiling at a
    // price no reading confirmed they go one round, or one photo, at a time: the scheduler).
    if (!refusedAt && w.service.requests().some((r) => r.method === 'POST' && r.status === 402))
      refusedAt = Date.now();
    if (!refusedAt || Date.now() - refusedAt < 500) return;
    clearInterval(topUp);
    w.service.setOptions({ chargeExtra: extraAfterTopUp });
    w.service.grant(EMAIL, 100);
  }, 10);
  try {
    return await runOnce(w, inDir, {
      maxDiamonds,
      wait: {},
      ...(rise
        ? {
            afterCreate: {
              n: rise.n,
              fn: () => {
                w.service.setOptions({ chargeExtra: rise.extra });
                if (rise.grant) w.service.grant(EMAIL, rise.grant);
              },
            },
          }
        : {}),
    });
  } finally {
    clearInterval(topUp);
  }
}

describe('a price a 402 named in this batch, then a top-up', () => {
  it('read while the photos wait, the price rising with it: the ceiling holds, the readings after it tell what was taken', async () => {
    const w = await world({ chargeExtra: 1 });
    const [photos] = await photoFolders(w, [12]);
    const run = await runWaitingForTopUp(w, photos!, 40, 2);
    // Before: 5 was sure in its batch, eight photos went at 5 with no margin and were charged 6:
    // 48 under 40, and the top-up hid it: the summary said 40. Now 5 keeps its margin (7): five
    // photos, 30 taken. The top-up was read while the photos waited, before any charge: the
    // readings after it tell what each charge took.
    expect(netSpent(w)).toBeLessThanOrEqual(40);
    expect(netSpent(w)).toBe(30);
    expect(run.exported).toBe(5);
    expect(run.diamondsSpent).toBe(30);
  }, 90_000);

  it('and the price rises after the top-up, before a reading: the ceiling holds', async () => {
    const w = await world({ chargeExtra: 1 });
    const [photos] = await photoFolders(w, [12]);
    const run = await runWaitingForTopUp(w, photos!, 40, 1, { n: 1, extra: 2 });
    // Before: eight photos at 5 with no margin, charged 6 from the first create answered on (the
    // fifth at least): 44 or more under 40. Now at 7 until the readings show 6.
    expect(netSpent(w)).toBeLessThanOrEqual(40);
    expect(netSpent(w)).toBeGreaterThanOrEqual(26);
    expect(run.exported).toBeGreaterThanOrEqual(5);
    expect(run.diamondsSpent).toBeGreaterThanOrEqual(netSpent(w));
  }, 90_000);

  it('and another credit amid the charges hides a rise: the ceiling holds, the summary says no less than was taken', async () => {
    const w = await world({ chargeExtra: 1 });
    const [photos] = await photoFolders(w, [12]);
    const run = await runWaitingForTopUp(w, photos!, 40, 1, { n: 1, extra: 2, grant: 50 });
    // Before: as above, 44 or more under 40. Now the reading whose window holds the credit cannot
    // tell what its charges took: each is counted at its plan and margin (7), estimated.
    expect(netSpent(w)).toBeLessThanOrEqual(40);
    expect(run.diamondsSpent).toBeGreaterThanOrEqual(netSpent(w));
    expect(run.diamondsUnconfirmed).toBeGreaterThan(0);
    expect(run.notices).toContainEqual(expect.stringContaining('estimated'));
  }, 90_000);
});
