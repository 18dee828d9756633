/**
 * A tool the price list gives no price for (`fallbackPriceDiamonds` 0 or left out: spec §2.9 calls
 * it approximate) is not free: under `--max-diamonds` one photo goes at a time until a balance
 * reading shows what it took, the ceiling holds, and the plan says the price is not known.
 * Without a ceiling the batch runs and the summary says what the readings show. Against the
 * reference /v1 service through `run`'s own path; money is checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'unknown-price@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

/** remove_background: charged 1 diamond by the reference service, whatever its list says. */
const CUTOUT: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

async function runListed(listed: number | null, maxDiamonds?: number) {
  const w = await world({ listedPrices: { remove_background: listed } });
  const [photos] = await photoFolders(w, [6]);
  const summary = await runOnce(w, photos!, {
    recipe: CUTOUT,
    ...(maxDiamonds !== undefined ? { maxDiamonds } : {}),
  });
  return { spent: netSpent(w), summary };
}

describe('a tool listed without a price', () => {
  for (const listed of [0, null])
    it(`fallbackPriceDiamonds ${listed === null ? 'left out' : '0'}, charged 1, --max-diamonds 2: the ceiling holds`, async () => {
      const { spent, summary } = await runListed(listed, 2);
      // Before: planned at 0, nothing counted against the ceiling, 6 charged, exit 0, "about 0
      // diamond(s) each".
      expect(spent).toBeLessThanOrEqual(2);
      expect(spent).toBeGreaterThanOrEqual(1);
      expect(summary.exported).toBe(spent);
      expect(summary.diamondsSpent).toBeGreaterThanOrEqual(spent);
      expect(summary.notices ?? []).toContainEqual(
        expect.stringContaining('price that is not known'),
      );
      expect((summary.notices ?? []).join('\n')).not.toContain('about 0 diamond');
    }, 90_000);

  it('no ceiling: all photos go, and the summary says what the readings show', async () => {
    const { spent, summary } = await runListed(0);
    // Before: 6 charged, summary 0 spent.
    expect(summary.exported).toBe(6);
    expect(spent).toBe(6);
    expect(summary.diamondsSpent).toBe(6);
  }, 90_000);
});
