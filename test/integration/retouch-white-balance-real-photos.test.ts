/**
 * amateur_to_pro on eval garments whose white balance was set 1000 K warmer or cooler (issue 11
 * item 3, the casts of photos we have not seen): a white backdrop clipped in two channels hid how
 * far past white the third went, so the cast was half corrected and the cut-out, made under the
 * cast, kept a digital backdrop's drop shadow as subject: 4.8-7.2% of the backdrop stayed grey
 * (049805_1, 050181_1). Figures for every photo and more changes: `npm run -s bench --
 * retouch-perturbed`.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR, garmentIds } from '../bench/quality';
import { whiteBalanceGains } from '../bench/white-balance';
import { linearGains, scoreCast } from './helpers/cast-score';

const ids = garmentIds();
const present = fs.existsSync(EVAL_DIR) && ids.length > 0;
if (!present) console.log(`white-balance retouch skipped: no photos with masks at ${EVAL_DIR}`);

describe.skipIf(!present)('amateur_to_pro on a white balance 1000 K off', () => {
  it(
    'takes the whole cast out, the backdrop goes white with no shadow kept, the garment undamaged',
    { timeout: 600_000 },
    async () => {
      for (const shift of [1000, -1000]) {
        const change = linearGains(whiteBalanceGains(shift));
        // Navy tee and a long-sleeved print on digital white backdrops with drop shadows.
        for (const id of ['049805_1', '050181_1']) {
          expect(ids, id).toContain(id);
          const s = await scoreCast(id, { photo: change });
          const label = `${id} ${shift > 0 ? 'warmer' : 'cooler'}`;
          console.log(
            `${label}: damage ${s.damage.toFixed(2)} left ${s.castLeft.toFixed(2)} backdrop ${s.backdrop.toFixed(1)} under 250 ${(100 * s.shaded).toFixed(2)} % bleached ${(100 * s.bleached).toFixed(2)} %`,
          );
          // Issue 11 item 3: median Delta E 2000 <= 3 with the global shift removed; the backdrop
          // white, no more shaded than the as-shot eval allows (2.5%); nothing bleached.
          expect(s.damage, label).toBeLessThanOrEqual(3);
          expect(s.castLeft, label).toBeLessThanOrEqual(3);
          expect(s.backdrop, label).toBeGreaterThanOrEqual(250);
          expect(s.shaded, label).toBeLessThanOrEqual(0.025);
          expect(s.bleached, label).toBeLessThanOrEqual(0.02);
        }
      }
    },
  );
});
