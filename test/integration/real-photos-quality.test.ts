/**
 * remove_background and amateur_to_pro on the real garment photos of ../shared/eval (issue 11,
 * items 1 and 3), read in place. Figures per photo are printed; `npm run bench -- quality` prints
 * the same with timings.
 *
 * Guarded just below today's level, which meets the targets (mean IoU 0.9900, minimum
 * 0.944 and halo 7.34/255 against 0.97, 0.92 and 8/255), and at today's level where the target is
 * not met yet (raise as it improves): bleaching (target: none; today at most 1.3% of a garment,
 * mean 0.15%).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  EVAL_DIR,
  garmentIds,
  scoreCutout,
  scoreRetouch,
  type CutoutScore,
  type RetouchScore,
} from '../bench/quality';

const ids = garmentIds();
const present = fs.existsSync(EVAL_DIR) && ids.length > 0;
if (!present) console.log(`real-photo quality skipped: no photos with masks at ${EVAL_DIR}`);

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;

describe.skipIf(!present)('real garment photos', () => {
  it(
    'remove_background: mean IoU >= 0.97 against the reference masks, and no photo collapses',
    { timeout: 900_000 },
    async () => {
      const scores: CutoutScore[] = [];
      for (const id of ids) {
        const s = await scoreCutout(id);
        scores.push(s);
        console.log(`${id} IoU ${s.iou.toFixed(4)} halo ${s.halo.toFixed(1)}`);
      }
      const ious = scores.map((s) => s.iou);
      const halos = scores.map((s) => s.halo);
      console.log(
        `mean IoU ${mean(ious).toFixed(4)}, min ${Math.min(...ious).toFixed(4)}, mean halo ${mean(halos).toFixed(1)}/255 over ${scores.length} photos`,
      );
      expect(scores.length).toBeGreaterThanOrEqual(40);
      expect(mean(ious)).toBeGreaterThanOrEqual(0.989); // issue target 0.97
      expect(Math.min(...ious)).toBeGreaterThanOrEqual(0.94); // issue target 0.92
      expect(mean(halos)).toBeLessThanOrEqual(7.4); // issue target 8
    },
  );

  it(
    'amateur_to_pro: white backdrop, garment colours kept (median dE2000 <= 3), nothing bleached wholesale',
    { timeout: 900_000 },
    async () => {
      const scores: RetouchScore[] = [];
      for (const id of ids) {
        const s = await scoreRetouch(id);
        scores.push(s);
        console.log(
          `${id} backdrop ${s.backdrop.toFixed(1)} grey ${(100 * s.shaded).toFixed(2)} % dE2000 ${s.deltaE.toFixed(2)} bleached ${(100 * s.bleached).toFixed(2)} %`,
        );
      }
      for (const s of scores) {
        expect(s.backdrop, s.id).toBeGreaterThanOrEqual(250);
        // A drop shadow on a digital white backdrop was kept as fabric, a grey outline on up to
        // 5.5% of the backdrop (049805_1); now at most 1.9%, the shading of photographed backdrops.
        expect(s.shaded, s.id).toBeLessThanOrEqual(0.025);
        expect(s.deltaE, s.id).toBeLessThanOrEqual(3);
        // Bleached = lightened by more than 10 L* or newly clipped to 255. Was up to 12.9% (00151_00)
        // where the cut-out took white fabric for a digital backdrop; fabric off the backdrop's exact
        // colour is now kept, and white fabric flat in spots is no longer flooded (3.7% -> 1.3% at
        // most). What remains is cut-out misses.
        expect(s.bleached, s.id).toBeLessThanOrEqual(0.02); // issue target: none
      }
      expect(mean(scores.map((s) => s.bleached))).toBeLessThanOrEqual(0.005);
    },
  );

  it(
    'amateur_to_pro on a flat grey digital backdrop saved as JPEG: the backdrop goes white, no grey box is kept',
    { timeout: 300_000 },
    async () => {
      // Darkened 15% and saved as JPEG, a pasted-on white backdrop becomes grey (216) that strays
      // a level here and there; 049947_1's pasted rectangle one level off it was kept as fabric.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-grey-backdrop-'));
      try {
        fs.mkdirSync(path.join(dir, 'garments'));
        fs.mkdirSync(path.join(dir, 'masks'));
        const chosen = ['049947_1', '049805_1', '051827_1'].filter((id) => ids.includes(id));
        for (const id of chosen) {
          await sharp(path.join(EVAL_DIR, 'garments', `${id}.jpg`))
            .linear(0.85, 0)
            .jpeg({ quality: 95 })
            .toFile(path.join(dir, 'garments', `${id}.jpg`));
          fs.copyFileSync(
            path.join(EVAL_DIR, 'masks', `${id}.png`),
            path.join(dir, 'masks', `${id}.png`),
          );
        }
        expect(chosen).toHaveLength(3);
        for (const id of chosen) {
          const s = await scoreRetouch(id, dir);
          console.log(
            `${id} darkened: backdrop ${s.backdrop.toFixed(1)} grey ${(100 * s.shaded).toFixed(2)} % dE2000 ${s.deltaE.toFixed(2)} bleached ${(100 * s.bleached).toFixed(2)} %`,
          );
          expect(s.backdrop, id).toBeGreaterThanOrEqual(250);
          expect(s.shaded, id).toBeLessThanOrEqual(0.025);
          expect(s.deltaE, id).toBeLessThanOrEqual(3);
          expect(s.bleached, id).toBeLessThanOrEqual(0.02);
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
