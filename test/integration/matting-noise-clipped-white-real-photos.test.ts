/**
 * remove_background on the eval garments shot on a white the camera clipped to 255 (22 of the 41),
 * with Gaussian noise of sigma 6 added (a high-ISO shot, or grain added in editing), scored as
 * `bench -- quality-perturbed` scores its variations (readPair, scorePair), against issue 11's
 * targets: mean IoU >= 0.97, every photo >= 0.92, mean halo <= 8/255.
 *
 * Clipping hides the noise's upper half, so the frame's neighbour differences read it at about
 * 0.6 of its size (sigma 6 read as 3.4): the noisy backdrop was taken for a digital one known to
 * a level and the flood stopped near the frame, keeping most of the backdrop (049920_1 0.445,
 * 049940_1 0.450, 049805_1 0.635, 051517_1 0.359; the 22 photos: mean 0.397, min 0.270). The noise is now read
 * from the frame's shortfall below 255 (clippedNoiseSigma, segment.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR, garmentIds } from '../bench/quality';
import { gaussianNoise, readPair, scorePair } from '../bench/quality-perturbed';

const SIGMA = 6;

/** Whether most of the photo's backdrop (mask 0) is clipped white: every channel at 255. */
async function onClippedWhite(id: string): Promise<boolean> {
  const photo = await sharp(path.join(EVAL_DIR, 'garments', `${id}.jpg`))
    .removeAlpha()
    .raw()
    .toBuffer();
  const mask = await sharp(path.join(EVAL_DIR, 'masks', `${id}.png`))
    .extractChannel(0)
    .raw()
    .toBuffer();
  let backdrop = 0;
  let clipped = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i]! >= 128) continue;
    backdrop++;
    if (photo[i * 3] === 255 && photo[i * 3 + 1] === 255 && photo[i * 3 + 2] === 255) clipped++;
  }
  return clipped >= 0.5 * backdrop;
}

const present = fs.existsSync(path.join(EVAL_DIR, 'garments')) && garmentIds().length > 0;
if (!present) console.log(`noisy clipped-white matting skipped: no photos at ${EVAL_DIR}`);

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;

describe.skipIf(!present)('remove_background with noise on a clipped white backdrop', () => {
  it(
    `noise sigma ${SIGMA}: mean IoU >= 0.97, every photo >= 0.92, mean halo <= 8`,
    { timeout: 600_000 },
    async () => {
      const noisy = {
        name: `noise${SIGMA}`,
        apply: async (p: Parameters<typeof gaussianNoise>[0]) => gaussianNoise(p, SIGMA, 0x5eed),
      };
      const scores: { id: string; iou: number; halo: number }[] = [];
      for (const id of garmentIds()) {
        if (!(await onClippedWhite(id))) continue;
        const { iou, halo } = await scorePair(id, noisy, await readPair(id));
        scores.push({ id, iou, halo });
        console.log(`${id} noise${SIGMA} IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
      }
      const ious = scores.map((s) => s.iou);
      console.log(
        `${scores.length} photos: mean IoU ${mean(ious).toFixed(4)}, min ${Math.min(...ious).toFixed(4)}, mean halo ${mean(scores.map((s) => s.halo)).toFixed(1)}`,
      );
      expect(scores.length).toBeGreaterThanOrEqual(20);
      expect(mean(ious)).toBeGreaterThanOrEqual(0.97);
      for (const s of scores) expect(s.iou, s.id).toBeGreaterThanOrEqual(0.92);
      expect(mean(scores.map((s) => s.halo))).toBeLessThanOrEqual(8);
    },
  );
});
