/**
 * remove_background on every eval garment under a strong lens vignette: the gain 1 - k r^2 on
 * linear light, k 0.61 and 0.72 (corners at 39% and 28% of the light): the robustness sweep's
 * `vig61` and `vig72` (test/bench/quality-perturbed.ts), scored as that sweep scores them.
 *
 * The hard ones are the real backdrops (studio white, lit or shaded, not one digital colour),
 * whose surface is the grid of medians filled under the subject: that fill never rose above the
 * frame's brightest, while the vignette keeps brightening toward the centre, so beside the garment
 * the flood stalled short of the outline and the shadow test read the backdrop's shadows as
 * lighter than the backdrop (051946_1 halo 122, 050191_1 95, 051988_1 91). Now the fill is lifted
 * toward the known cells' trend (backdrop.ts).
 *
 * Before (mean IoU / min / mean halo; the most halo of a photo): vig61 0.9874 / 0.9486 (051946_1)
 * / 17.1, most 122.3 (051946_1); vig72 0.9873 / 0.9557 (051946_1) / 16.5, most 119.4. After: vig61
 * 0.9897 / 0.9644 (00151_00) / 7.1, most 43.6 (050181_1: 79 before, and 40-47 under noise6, jpeg55
 * and tilt3 alike, so not the vignette's); vig72 0.9896 / 0.9629 / 7.0, most 43.5. The bounds are
 * issue 11's (mean halo <= 8/255) and, per photo, a margin over what is left.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR, garmentIds } from '../bench/quality';
import { VARIATIONS, readPair, scorePair } from '../bench/quality-perturbed';

const present = fs.existsSync(path.join(EVAL_DIR, 'garments')) && garmentIds().length > 0;
if (!present) console.log(`vignetted real-backdrop matting skipped: no photos at ${EVAL_DIR}`);

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;

/** Per variation: the least mean IoU and least IoU of any photo, the most mean and photo halo. */
const CASES = [
  { name: 'vig61', minMean: 0.97, minIoU: 0.92, halo: 8, photoHalo: 50 },
  { name: 'vig72', minMean: 0.97, minIoU: 0.92, halo: 8, photoHalo: 50 },
];

describe.skipIf(!present)('remove_background under a strong lens vignette', () => {
  for (const c of CASES) {
    it(
      `${c.name}: mean IoU >= ${c.minMean}, every photo >= ${c.minIoU}, mean halo <= ${c.halo}, every photo's halo <= ${c.photoHalo}`,
      { timeout: 900_000 },
      async () => {
        const variation = VARIATIONS.find((v) => v.name === c.name)!;
        const scores: { id: string; iou: number; halo: number }[] = [];
        for (const id of garmentIds()) {
          const { iou, halo } = await scorePair(id, variation, await readPair(id));
          scores.push({ id, iou, halo });
          console.log(`${id} ${c.name} IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
        }
        const ious = scores.map((s) => s.iou);
        const haloes = scores.map((s) => s.halo);
        console.log(
          `${c.name}, ${scores.length} photos: mean IoU ${mean(ious).toFixed(4)}, min ${Math.min(...ious).toFixed(4)}, mean halo ${mean(haloes).toFixed(1)}, most ${Math.max(...haloes).toFixed(1)}`,
        );
        expect(scores.length).toBeGreaterThanOrEqual(40);
        expect(mean(ious)).toBeGreaterThanOrEqual(c.minMean);
        for (const s of scores) expect(s.iou, s.id).toBeGreaterThanOrEqual(c.minIoU);
        expect(mean(haloes)).toBeLessThanOrEqual(c.halo);
        for (const s of scores) expect(s.halo, s.id).toBeLessThanOrEqual(c.photoHalo);
      },
    );
  }
});
