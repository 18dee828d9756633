/**
 * remove_background on every eval garment under a lens vignette: a gain on linear light falling to
 * 70% at the corners with the square of the distance from the centre (the robustness sweep's
 * `vignette`), applied to the photo; the mask stays. Scored as `bench -- quality-perturbed` scores
 * its variations (readPair, scorePair).
 *
 * The hard ones are the digital backdrops (a cut-out pasted on 246 grey or 255 white): the vignette
 * makes the frame a gradient, no longer one flat colour, so the grid surface (medians of cells) was
 * fitted and the flood held to 2.5 levels, enough to run through white fabric a level or two off
 * the grey (before: mean 0.9551, min 0.6684 12562_00, 06123_00 0.704, 00151_00 0.717, halo 15.0).
 * Now a noiseless frame that is the rounding of one smooth surface (a quadratic in linear light
 * with radial 4th and 6th powers, smooth-backdrop.ts) is read as a digital backdrop under that
 * surface and held to its rounding. The second case, the gain laid on the gamma-encoded levels,
 * is what the radial powers are for (a quadratic alone leaves 12562_00 at 0.804 there).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR, garmentIds } from '../bench/quality';
import { readPair, scorePair } from '../bench/quality-perturbed';

const present = fs.existsSync(path.join(EVAL_DIR, 'garments')) && garmentIds().length > 0;
if (!present) console.log(`vignetted matting skipped: no photos at ${EVAL_DIR}`);

type Pair = Awaited<ReturnType<typeof readPair>>;

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;

const LINEAR = Float64Array.from({ length: 256 }, (_, i) => {
  const v = i / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
});
const toSrgb = (v: number) => {
  const c = Math.max(0, Math.min(1, v));
  return Math.round(255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055));
};

/**
 * The gain `1 - strength * (r / r_corner)^2` on the photo, on linear light (a lens) or on the
 * gamma-encoded levels (a vignette added in an editor); the mask is unchanged.
 */
function vignette(pair: Pair, strength: number, on: 'linear' | 'levels'): Pair {
  const { width: w, height: h, channels } = pair.photo;
  const data = Buffer.from(pair.photo.data);
  const cornerSquared = (w / 2) ** 2 + (h / 2) ** 2;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const gain = 1 - (strength * ((x - w / 2) ** 2 + (y - h / 2) ** 2)) / cornerSquared;
      for (let c = 0; c < 3; c++) {
        const i = (y * w + x) * channels + c;
        data[i] =
          on === 'linear'
            ? toSrgb(LINEAR[data[i]!]! * gain)
            : Math.max(0, Math.min(255, Math.round(data[i]! * gain)));
      }
    }
  return { photo: { ...pair.photo, data }, mask: pair.mask };
}

/**
 * Before (mean / min / halo): on linear light 0.9551 / 0.6684 (12562_00) / 15.0; on the levels
 * 0.9619 / 0.6851 (07382_00) / 18.8. After: 0.9899 / 0.9640 / 7.2 and 0.9899 / 0.9645 / 7.2 (the
 * real backdrop's trend fill, ad70aa5, took the levels case from 8.8 to issue 11's 8). The strong
 * vignettes (61% and 72% on linear light) are matting-vignette-real-backdrop's.
 */
const CASES = [
  { name: 'vignette 30% on linear light', strength: 0.3, on: 'linear' as const, halo: 8 },
  { name: 'vignette 20% on the levels', strength: 0.2, on: 'levels' as const, halo: 8 },
];

describe.skipIf(!present)('remove_background on vignetted photos of the eval garments', () => {
  for (const c of CASES) {
    it(
      `${c.name}: mean IoU >= 0.97, every photo >= 0.92, mean halo <= ${c.halo}`,
      { timeout: 600_000 },
      async () => {
        const vignetted = {
          name: 'vignette',
          apply: async (p: Pair) => vignette(p, c.strength, c.on),
        };
        const scores: { id: string; iou: number; halo: number }[] = [];
        for (const id of garmentIds()) {
          const { iou, halo } = await scorePair(id, vignetted, await readPair(id));
          scores.push({ id, iou, halo });
          console.log(`${id} ${c.name} IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
        }
        const ious = scores.map((s) => s.iou);
        console.log(
          `${c.name}, ${scores.length} photos: mean IoU ${mean(ious).toFixed(4)}, min ${Math.min(...ious).toFixed(4)}, mean halo ${mean(scores.map((s) => s.halo)).toFixed(1)}`,
        );
        expect(scores.length).toBeGreaterThanOrEqual(40);
        expect(mean(ious)).toBeGreaterThanOrEqual(0.97);
        for (const s of scores) expect(s.iou, s.id).toBeGreaterThanOrEqual(0.92);
        expect(mean(scores.map((s) => s.halo))).toBeLessThanOrEqual(c.halo);
      },
    );
  }
});
