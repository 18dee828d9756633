/**
 * A price rise per request larger than the ceiling's margin, charged to several photos on their
 * way before a balance reading shows it (spec §2.1 lets the price move per request, "slightly";
 * this is more). Far from `--max-diamonds` photos go at full speed; near it, the unconfirmed spend
 * in flight is limited so that a rise up to the studio's worst case cannot take the batch past the
 * ceiling. Against the reference /v1 service (written from the spec alone) through `run`'s own
 * path; money is checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'rise-in-flight@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

/** amateur_to_pro: 2 diamonds at the reference service's list. */
const TO_PRO: Recipe = {
  request: { toolId: 'amateur_to_pro', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};

describe('a price rise larger than the margin, from the second create on', () => {
  it('list 2, charged 6: the ceiling holds and the summary is no less than was taken', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [10]);
    const summary = await runOnce(w, photos!, {
      recipe: TO_PRO,
      maxDiamonds: 20,
      afterCreate: { n: 1, fn: () => w.service.setOptions({ chargeExtra: 4 }) },
    });
    const spent = netSpent(w);
    // Before: four creates on their way before a reading showed 6: 28 spent under 20.
    expect(spent).toBeLessThanOrEqual(20);
    expect(summary.exported).toBeGreaterThanOrEqual(2);
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(spent);
  }, 90_000);

  it('a balance read that keeps failing near the ceiling: the photos are held, the reads spaced out', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [8]);
    const accountReads = { failAfter: 2, seen: 0 };
    const summary = await runOnce(w, photos!, {
      recipe: TO_PRO,
      maxDiamonds: 20,
      concurrency: 1,
      accountReads,
      afterCreate: { n: 2, fn: () => w.service.setOptions({ chargeExtra: 4 }) },
    });
    const spent = netSpent(w);
    // Before: each scheduler tick asked again at once, 475 reads in 30 s (the day's requests gone).
    expect(accountReads.seen).toBeLessThan(12);
    expect(spent).toBeLessThanOrEqual(20);
    expect(summary.held.length).toBeGreaterThan(0);
    expect(summary.held.some((h) => /balance read .* failed/.test(h.reason))).toBe(true);
    // The closing read failed too: the summary counts list prices and says they are unconfirmed.
    if (summary.diamondsSpent < spent) expect(summary.diamondsUnconfirmed).toBeGreaterThan(0);
  }, 90_000);

  it('a balance read that fails from the start under a ceiling: nothing is sent, the reads spaced out, the photos held saying why', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [3]);
    // Spec §5.7 leaves key scopes open: a key may be refused the account read (403), or it fails.
    const accountReads = { failAfter: 0, seen: 0 };
    const summary = await runOnce(w, photos!, { recipe: TO_PRO, maxDiamonds: 20, accountReads });
    // Before: the ceiling's first reading was asked at every tick, 495 reads in 20 s, the day's
    // requests gone and the run ended on 'daily request cap reached'.
    expect(accountReads.seen).toBeLessThan(12);
    expect(netSpent(w)).toBe(0);
    expect(summary.exported).toBe(0);
    expect(summary.held).toHaveLength(3);
    for (const h of summary.held) expect(h.reason).toMatch(/balance cannot be read .*ceiling/);
  }, 90_000);
});
