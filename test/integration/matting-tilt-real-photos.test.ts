/**
 * remove_background on every eval garment shot 3 degrees off level: photo and mask rotated alike
 * (the photo's corners filled with the median of its outermost 4 px, the mask's with 0), cropped
 * back to the original size about the centre: the robustness sweep's `tilt3`. Scored as
 * `bench -- quality-perturbed` scores its variations (readPair, scorePair).
 *
 * The hard one is 00151_00 (white stripes on a flat digital 246 grey): the shadow flood, which on
 * textured ground goes a few px only, ran along the core of the tilted white stripes (a level or
 * more under the grey, as neutral, over TEXTURE_REACH from the black ones) from the outline, 100+ px
 * deep, and whole stripes were cut out (0.897). On a digital backdrop open ground narrower than
 * 5 px now counts as textured (segment.ts narrowAsTexture).
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR, garmentIds } from '../bench/quality';
import { readPair, scorePair } from '../bench/quality-perturbed';

const present = fs.existsSync(path.join(EVAL_DIR, 'garments')) && garmentIds().length > 0;
if (!present) console.log(`tilted matting skipped: no photos at ${EVAL_DIR}`);

type Pair = Awaited<ReturnType<typeof readPair>>;
type Pixels = Pair['photo'];

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;

/** Median of each channel over the photo's outermost 4 px: the backdrop a tilt reveals. */
function borderColour(p: Pixels): { r: number; g: number; b: number } {
  const values: number[][] = [[], [], []];
  const { width: w, height: h, data, channels } = p;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (x >= 4 && x < w - 4 && y >= 4 && y < h - 4) continue;
      for (let c = 0; c < 3; c++) values[c]!.push(data[(y * w + x) * channels + c]!);
    }
  const [r, g, b] = values.map((v) => v.sort((a, z) => a - z)[v.length >> 1]!);
  return { r: r!, g: g!, b: b! };
}

/** Rotated by `degrees` over `fill`, cropped back to its own size about the centre. */
async function rotated(p: Pixels, degrees: number, fill: object): Promise<Pixels> {
  const raw = { width: p.width, height: p.height, channels: p.channels as 1 | 3 };
  const turned = await sharp(p.data, { raw })
    .rotate(degrees, { background: fill })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { data, info } = await sharp(turned.data, {
    raw: {
      width: turned.info.width,
      height: turned.info.height,
      channels: turned.info.channels as 1 | 3 | 4,
    },
  })
    .extract({
      left: Math.floor((turned.info.width - p.width) / 2),
      top: Math.floor((turned.info.height - p.height) / 2),
      width: p.width,
      height: p.height,
    })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

async function tilt(pair: Pair, degrees: number): Promise<Pair> {
  const photo = await rotated(pair.photo, degrees, borderColour(pair.photo));
  const maskRgb = await rotated(pair.mask, degrees, { r: 0, g: 0, b: 0 });
  const channels = maskRgb.channels;
  const data = Buffer.alloc(maskRgb.width * maskRgb.height);
  for (let i = 0; i < data.length; i++) data[i] = maskRgb.data[i * channels]! >= 128 ? 255 : 0;
  return { photo, mask: { data, width: maskRgb.width, height: maskRgb.height, channels: 1 } };
}

/**
 * Before: mean 0.9877, min 0.8968 (00151_00), mean halo 9.70. After: 0.9884 / 0.9275 / 9.71 (only
 * 00151_00 moves). The halo bound is the level tilting alone costs (original 6.8), not issue 11's 8.
 */
describe.skipIf(!present)('remove_background on tilted photos of the eval garments', () => {
  it(
    'tilted 3 degrees: mean IoU >= 0.97, every photo >= 0.92, mean halo <= 10',
    { timeout: 600_000 },
    async () => {
      const tilted = { name: 'tilt3', apply: (p: Pair) => tilt(p, 3) };
      const scores: { id: string; iou: number; halo: number }[] = [];
      for (const id of garmentIds()) {
        const { iou, halo } = await scorePair(id, tilted, await readPair(id));
        scores.push({ id, iou, halo });
        console.log(`${id} tilt 3 IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
      }
      const ious = scores.map((s) => s.iou);
      console.log(
        `tilt 3, ${scores.length} photos: mean IoU ${mean(ious).toFixed(4)}, min ${Math.min(...ious).toFixed(4)}, mean halo ${mean(scores.map((s) => s.halo)).toFixed(1)}`,
      );
      expect(scores.length).toBeGreaterThanOrEqual(40);
      expect(mean(ious)).toBeGreaterThanOrEqual(0.97);
      for (const s of scores) expect(s.iou, s.id).toBeGreaterThanOrEqual(0.92);
      expect(mean(scores.map((s) => s.halo))).toBeLessThanOrEqual(10);
    },
  );
});
