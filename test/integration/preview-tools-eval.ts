/**
 * Reading the real photos of ../shared/eval in place (never copied) for the preview-tool and
 * compliance tests: the photo, its reference mask, and each pixel's distance to the mask's edge.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sharp } from '../../src/infra/sharp';
import { EVAL_DIR } from '../bench/quality';

export { EVAL_DIR };
export const evalPresent = (): boolean =>
  fs.existsSync(path.join(EVAL_DIR, 'garments')) && fs.existsSync(path.join(EVAL_DIR, 'masks'));

export const garmentPhoto = (id: string): Promise<Buffer> =>
  fs.promises.readFile(path.join(EVAL_DIR, 'garments', `${id}.jpg`));

export type Mask = { mask: Uint8Array; width: number; height: number };

/** 1 = garment, 0 = background. */
export async function garmentMask(id: string): Promise<Mask> {
  const { data, info } = await sharp(path.join(EVAL_DIR, 'masks', `${id}.png`))
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    mask: Uint8Array.from(data, (v) => (v >= 128 ? 1 : 0)),
    width: info.width,
    height: info.height,
  };
}

/**
 * Chamfer distance (in px, 3-4 weights / 3) from every pixel to the nearest pixel whose mask value
 * differs: outside pixels measure to the garment, inside pixels to the background.
 */
export function edgeDistance({ mask, width, height }: Mask): Float32Array {
  const d = new Float32Array(width * height);
  const big = 1e9;
  for (let i = 0; i < d.length; i++) {
    const x = i % width;
    const y = (i / width) | 0;
    const v = mask[i];
    const edge =
      (x > 0 && mask[i - 1] !== v) ||
      (x < width - 1 && mask[i + 1] !== v) ||
      (y > 0 && mask[i - width] !== v) ||
      (y < height - 1 && mask[i + width] !== v);
    d[i] = edge ? 0 : big;
  }
  const relax = (i: number, j: number, w: number) => {
    if (mask[i] === mask[j] && d[j]! + w < d[i]!) d[i] = d[j]! + w;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (x > 0) relax(i, i - 1, 3);
      if (y > 0) {
        relax(i, i - width, 3);
        if (x > 0) relax(i, i - width - 1, 4);
        if (x < width - 1) relax(i, i - width + 1, 4);
      }
    }
  }
  for (let y = height - 1; y >= 0; y--) {
    for (let x = width - 1; x >= 0; x--) {
      const i = y * width + x;
      if (x < width - 1) relax(i, i + 1, 3);
      if (y < height - 1) {
        relax(i, i + width, 3);
        if (x < width - 1) relax(i, i + width + 1, 4);
        if (x > 0) relax(i, i + width - 1, 4);
      }
    }
  }
  for (let i = 0; i < d.length; i++) d[i] = d[i]! / 3;
  return d;
}

/** 8-bit RGB pixels of an image (alpha flattened onto `background`). */
export async function rgbOf(
  image: Buffer | string,
  background = '#ffffff',
): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(image)
    .flatten({ background })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}
