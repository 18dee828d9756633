/**
 * Canvas presets (Shopify, Zalando) on a model standing on a floor of another colour than the wall
 * (a paper sweep, a wooden floor): the seam where they meet, a shadow or cove line right across
 * the frame, read as product at both side edges. The product's box spanned the width, so the
 * square was cropped inside the photo and 052767_0 (a blue wall over a grey floor) lost its legs
 * from the knees. A product that really touches both sides (a scarf laid across) still counts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharp } from '../../src/infra/sharp';
import { backdropLine } from '../../src/studio/export/edge-band';
import { productBoxAcrossRows, type RawImage } from '../../src/studio/export/product-bbox';
import { renderForPreset } from '../../src/studio/export/render';
import { PEOPLE_DIR, peoplePhotos } from '../bench/people-wall';
import { detailRows } from './helpers/images';

type Rgb = [number, number, number];
const W = 600;
const H = 800;
const DRESS: Rgb = [200, 30, 40];
const SHOES: Rgb = [10, 10, 10];
const FIGURE = { left: 250, right: 350, top: 120, feet: 740 };

/**
 * A studio scene: a wall lit from the left, a floor of another colour from `seamAt` down (tilted
 * by `tilt` px across the frame), a dark shadow line at the seam and a light cove above it, and a
 * figure (red dress, skin legs, black shoes) standing in front. `scarf` lays a red band across.
 */
function scene(opts: { seamAt: number | null; tilt?: number; scarf?: [number, number] }): Buffer {
  const data = Buffer.alloc(W * H * 3);
  const put = (x: number, y: number, c: Rgb) => data.set(c, (y * W + x) * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const light = 1 - (0.12 * x) / W;
      let c: Rgb = [150 * light, 195 * light, 210 * light];
      if (opts.seamAt !== null) {
        const seam = opts.seamAt + ((opts.tilt ?? 0) * (x - W / 2)) / W;
        const d = y - seam;
        if (d >= 0) c = [110 - d * 0.05, 118 - d * 0.05, 122 - d * 0.05];
        if (d >= -22 && d < -4) c = [185, 222, 232]; // the cove's lit curve
        if (Math.abs(d) < 4) c = [35, 45, 50]; // the shadow where wall meets floor
      }
      put(x, y, c.map(Math.round) as Rgb);
    }
  for (let y = FIGURE.top; y < FIGURE.feet; y++)
    for (let x = FIGURE.left; x < FIGURE.right; x++) {
      if (y < 560) put(x, y, DRESS);
      else if (y < FIGURE.feet - 20 && (x < 285 || x >= 315) && x >= 265 && x < 335)
        put(x, y, [205, 160, 130]);
      else if (y >= FIGURE.feet - 20 && (x < 290 || x >= 310) && x >= 262 && x < 338)
        put(x, y, SHOES);
    }
  if (opts.scarf)
    for (let y = opts.scarf[0]; y < opts.scarf[1]; y++)
      for (let x = 0; x < W; x++) put(x, y, [60 + (x % 7) * 3, 40, 150]);
  return data;
}

const png = (raw: Buffer) =>
  sharp(raw, { raw: { width: W, height: H, channels: 3 } })
    .png()
    .toBuffer();

/** Bounding box of the pixels within 40 levels of `colour`, as shares of the image. */
async function extentOf(image: Buffer, colours: Rgb[]) {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  let left = Infinity;
  let right = -1;
  let top = Infinity;
  let bottom = -1;
  for (let y = 0; y < info.height; y++)
    for (let x = 0; x < info.width; x++) {
      const i = (y * info.width + x) * info.channels;
      const near = colours.some((c) => c.every((v, k) => Math.abs(data[i + k]! - v) <= 40));
      if (!near) continue;
      left = Math.min(left, x);
      right = Math.max(right, x + 1);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y + 1);
    }
  return { left, right, top, bottom, width: info.width, height: info.height };
}

describe('canvas presets with a wall meeting a floor (synthetic scenes)', () => {
  it.each([
    ['a level seam', { seamAt: 600 }],
    ['a seam tilted 24 px across the frame', { seamAt: 600, tilt: 24 }],
  ] as const)(
    'Shopify keeps the whole figure, centred, with %s',
    { timeout: 60_000 },
    async (_, opts) => {
      const exported = await renderForPreset(await png(scene(opts)), {
        preset: 'shopify',
        format: 'png',
        quality: 90,
      });
      const figure = await extentOf(exported.data, [DRESS, SHOES]);
      const shoes = await extentOf(exported.data, [SHOES]);
      const scale = exported.upscale;
      // Whole: the dress's top to the shoes' soles at the photo's scale, nothing cut off.
      expect((figure.bottom - figure.top) / scale).toBeGreaterThan(FIGURE.feet - FIGURE.top - 4);
      expect(shoes.bottom).toBeLessThan(figure.height);
      const centre = (figure.left + figure.right) / 2 / figure.width;
      expect(Math.abs(centre - 0.5)).toBeLessThan(0.02);
    },
  );

  it('a scarf laid across the frame is still product from side to side', () => {
    for (const seamAt of [null, 600]) {
      const img: RawImage = {
        data: scene({ seamAt, scarf: [300, 340] }),
        width: W,
        height: H,
        channels: 3,
      };
      const box = productBoxAcrossRows(img, backdropLine(img, 'left'), backdropLine(img, 'right'));
      expect(box).toMatchObject({ left: 0, width: W });
    }
  });
});

const photos = peoplePhotos();
if (photos.length === 0)
  console.log(`floor seam test on people skipped: no photos at ${PEOPLE_DIR}`);

/** The figure's rows: from its first to its last line of detail (`detailRows`). */
const figureRows = detailRows;

describe.skipIf(photos.length === 0)('Shopify square of the people photos', () => {
  it(
    'keeps every figure whole, 052767_0 (a blue wall over a grey floor) down to its feet',
    { timeout: 600_000 },
    async () => {
      const cut: Record<string, string> = {};
      for (const name of photos) {
        const source = await fs.promises.readFile(path.join(PEOPLE_DIR, name));
        const inSource = await figureRows(source);
        const exported = await renderForPreset(source, {
          preset: 'shopify',
          format: 'jpeg',
          quality: 90,
        });
        const inExport = await figureRows(exported.data);
        // The export enlarges the photo (768x1024 to 2048 square): the figure's rows at that
        // scale, unless some were cropped away.
        const kept =
          (inExport.bottom - inExport.top) / ((inSource.bottom - inSource.top) * exported.upscale);
        const feetHadRoom = inSource.bottom <= 0.995 * inSource.height;
        const feetCut = feetHadRoom && inExport.bottom >= inExport.height;
        if (kept < 0.97 || feetCut)
          cut[name] = `${(100 * kept).toFixed(1)}% of the rows${feetCut ? ', feet cut' : ''}`;
      }
      console.log(`Shopify figures cut: ${JSON.stringify(cut)}`);
      expect(photos).toContain('052767_0.jpg');
      expect(cut).toEqual({});
    },
  );
});
