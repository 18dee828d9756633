/**
 * remove_background on real garment photos larger than its working size (studio photos are several
 * thousand pixels): the matte is found at a long side of 1024 and scaled up, and the outline must
 * stay where the photo puts it and as sharp as it was found. Six eval garments of ../shared/eval,
 * upscaled 1.5x with their masks exactly as `bench -- quality-perturbed` does (`up1.5`), chosen for
 * varied edges among those whose native cut-out is clean: a dark tee, a pale print, thin straps,
 * frayed jeans, tulle, white stripes on a pale backdrop (the lowest IoU). Each must meet the
 * issue's targets (halo <= 8/255, IoU >= 0.92). With libvips' linear upscale the halo was 15.1,
 * 12.0, 8.8, 11.7 and 12.6 on the first five. (Over all 41 photos the up1.5 mean halo is still
 * above 8: the segmentation of a resampled photo is wider than of the original, see the bench.)
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { removeBackground } from '../../src/core/providers/local/remove-background';
import { EVAL_DIR } from '../bench/quality';
import { VARIATIONS } from '../bench/quality-perturbed';

const IDS = ['03032_00', '049949_1', '050002_1', '051827_1', '053744_1', '00151_00'];
const present = IDS.every(
  (id) =>
    fs.existsSync(path.join(EVAL_DIR, 'garments', `${id}.jpg`)) &&
    fs.existsSync(path.join(EVAL_DIR, 'masks', `${id}.png`)),
);
if (!present) console.log(`upscaled real-photo matting skipped: photos missing at ${EVAL_DIR}`);

const upscale = VARIATIONS.find((v) => v.name === 'up1.5')!;

async function pixels(file: string, channels: 1 | 3) {
  const img = sharp(file);
  const { data, info } = await (channels === 1 ? img.extractChannel(0) : img.removeAlpha())
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Pixels outside `mask` within 3 steps (4-connected) of it: the halo band of `bench quality`. */
function outerBand(mask: Buffer, w: number, h: number): Uint8Array {
  let grown = Uint8Array.from(mask, (v) => (v ? 1 : 0));
  for (let k = 0; k < 3; k++) {
    const next = Uint8Array.from(grown);
    for (let i = 0; i < grown.length; i++) {
      if (grown[i]) continue;
      const x = i % w;
      if (
        (x > 0 && grown[i - 1]) ||
        (x < w - 1 && grown[i + 1]) ||
        (i >= w && grown[i - w]) ||
        (i + w < w * h && grown[i + w])
      )
        next[i] = 1;
    }
    grown = next;
  }
  return Uint8Array.from(grown, (v, i) => (v && !mask[i] ? 1 : 0));
}

describe.skipIf(!present)('remove_background on real photos larger than its working size', () => {
  it.each(IDS)(
    '%s upscaled 1.5x: halo <= 8/255 outside the reference mask and IoU >= 0.92',
    { timeout: 120_000 },
    async (id) => {
      const photo = await pixels(path.join(EVAL_DIR, 'garments', `${id}.jpg`), 3);
      const mask = await pixels(path.join(EVAL_DIR, 'masks', `${id}.png`), 1);
      for (let i = 0; i < mask.data.length; i++) mask.data[i] = mask.data[i]! >= 128 ? 255 : 0;
      const big = await upscale.apply({ photo, mask });
      const input = await sharp(big.photo.data, {
        raw: { width: big.photo.width, height: big.photo.height, channels: 3 },
      })
        .png({ compressionLevel: 1 })
        .toBuffer();
      const alpha = await sharp(await removeBackground(input))
        .extractChannel(3)
        .raw()
        .toBuffer();
      const m = big.mask;
      expect(alpha.length).toBe(m.width * m.height);
      expect(m.width).toBe(Math.round(photo.width * 1.5));
      let inter = 0;
      let union = 0;
      for (let i = 0; i < alpha.length; i++) {
        const p = alpha[i]! > 127;
        const r = m.data[i]! > 0;
        if (p && r) inter++;
        if (p || r) union++;
      }
      const band = outerBand(m.data, m.width, m.height);
      let sum = 0;
      let count = 0;
      for (let i = 0; i < band.length; i++)
        if (band[i]) {
          sum += alpha[i]!;
          count++;
        }
      const iou = inter / union;
      const halo = sum / count;
      console.log(`${id} up1.5 IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
      expect(halo).toBeLessThanOrEqual(8);
      expect(iou).toBeGreaterThanOrEqual(0.92);
    },
  );
});
