/**
 * Where photo_reframe put the photo in its output: the reframe may crop, extend centred, or keep a
 * side the subject is cut by at the frame, so the tests that measure the added canvas find the
 * photo instead of assuming it is centred.
 */
import { sharp } from '../../src/infra/sharp';

export type Rgb = { data: Buffer; width: number; height: number };

export const rgbRaw = async (image: Buffer): Promise<Rgb> => {
  const { data, info } = await sharp(image)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
};

/**
 * The photo's top-left corner in an extended output (the offset whose pixels match the photo's
 * best on a sparse grid), or null when the output is a crop (no added canvas).
 */
export function photoPlacement(photo: Rgb, output: Rgb): { left: number; top: number } | null {
  if (output.width <= photo.width && output.height <= photo.height) return null;
  let best = { left: 0, top: 0, diff: Infinity };
  for (let top = 0; top <= output.height - photo.height; top++)
    for (let left = 0; left <= output.width - photo.width; left++) {
      let diff = 0;
      let count = 0;
      for (let y = 0; y < photo.height; y += 37)
        for (let x = 0; x < photo.width; x += 11) {
          const o = ((y + top) * output.width + x + left) * 3;
          const p = (y * photo.width + x) * 3;
          for (let c = 0; c < 3; c++) diff += Math.abs(output.data[o + c]! - photo.data[p + c]!);
          count++;
        }
      if (diff / count < best.diff) best = { left, top, diff: diff / count };
    }
  return { left: best.left, top: best.top };
}
