/**
 * remove_background on real garment photos larger than its working size (studio photos are several
 * thousand pixels): the matte is found at a long side of 1024 and scaled up, and the outline must
 * stay where the photo puts it and as sharp as it was found. Seven eval garments of ../shared/eval,
 * upscaled 1.5x with their masks exactly as `bench -- quality-perturbed` does (`up1.5`), chosen for
 * varied edges among those whose native cut-out is clean: a dark tee, a pale print, thin straps,
 * frayed jeans, tulle, white stripes on a pale backdrop (the lowest IoU), and a grey tee with a
 * soft, out-of-focus outline. Each must meet the targets (halo <= 8/255, IoU >= 0.92).
 * With libvips' linear upscale the halo was 15.1, 12.0, 8.8, 11.7 and 12.6 on the first five.
 * The halo band is 3 eval pixels wide, so 5 output pixels at 1.5x: measured over 3 output pixels
 * (2 of the eval's), 00055_00's soft outline scored 9.2 (5.5 now), where the reference mask
 * itself, resampled as the photo is, scores 12.3 (7.4 over 5). Over all 41 photos the up1.5 mean
 * halo is still above 8 (8.5, beside 8.0 for that ideal matte; see the bench).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR } from '../bench/quality';
import { VARIATIONS, readPair, scorePair } from '../bench/quality-perturbed';

const IDS = ['03032_00', '049949_1', '050002_1', '051827_1', '053744_1', '00151_00', '00055_00'];
const present = IDS.every(
  (id) =>
    fs.existsSync(path.join(EVAL_DIR, 'garments', `${id}.jpg`)) &&
    fs.existsSync(path.join(EVAL_DIR, 'masks', `${id}.png`)),
);
if (!present) console.log(`upscaled real-photo matting skipped: photos missing at ${EVAL_DIR}`);

const upscale = VARIATIONS.find((v) => v.name === 'up1.5')!;

describe.skipIf(!present)('remove_background on real photos larger than its working size', () => {
  it.each(IDS)(
    '%s upscaled 1.5x: halo <= 8/255 outside the reference mask and IoU >= 0.92',
    { timeout: 120_000 },
    async (id) => {
      const original = await readPair(id);
      expect((await upscale.apply(original)).mask.width).toBe(
        Math.round(original.photo.width * 1.5),
      );
      // Scored as `bench -- quality-perturbed` scores it (throws if the cut-out's size changed).
      const { iou, halo } = await scorePair(id, upscale, original);
      console.log(`${id} up1.5 IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
      expect(halo).toBeLessThanOrEqual(8);
      expect(iou).toBeGreaterThanOrEqual(0.92);
    },
  );
});
