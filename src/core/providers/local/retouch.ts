/**
 * amateur_to_pro: white balance on the background (it should be neutral), levels, a gentle
 * contrast curve, and a background clean-up that evens out the backdrop around the subject.
 */
import sharp from 'sharp';
import { decodeMeta, open } from './image-io';
import { computeMatte, matteAt } from './remove-background';

export async function retouchPhoto(input: Buffer): Promise<Buffer> {
  await decodeMeta(input);
  const { data, info } = await open(input).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const matte = await computeMatte(input);
  const alpha = await matteAt(matte, width, height);

  // Background mean (where the matte says background) decides the white balance.
  const sum = [0, 0, 0];
  let count = 0;
  for (let i = 0; i < width * height; i++) {
    if (alpha[i]! < 16) {
      for (let c = 0; c < 3; c++) sum[c]! += data[i * 3 + c]!;
      count++;
    }
  }
  const mean = count > 0 ? sum.map((s) => s / count) : [200, 200, 200];
  const grey = (mean[0]! + mean[1]! + mean[2]!) / 3;
  const gains = mean.map((m) => grey / Math.max(1, m));
  // Lift a greyish backdrop toward a clean light grey, keep dark backdrops dark.
  const lift = grey > 120 ? Math.min(1.25, 240 / grey) : 1;
  const clean = mean.map((m, c) => Math.min(255, m * gains[c]! * lift));

  const out = Buffer.alloc(data.length);
  for (let i = 0; i < width * height; i++) {
    const a = alpha[i]! / 255;
    for (let c = 0; c < 3; c++) {
      const corrected = Math.min(255, data[i * 3 + c]! * gains[c]! * lift);
      // Background pixels move toward one even colour: blotches and dust disappear.
      out[i * 3 + c] = Math.round(corrected * a + (corrected * 0.35 + clean[c]! * 0.65) * (1 - a));
    }
  }
  return sharp(out, { raw: { width, height, channels: 3 } })
    .normalise({ lower: 0.5, upper: 99.7 })
    .linear(1.06, -6)
    .modulate({ saturation: 1.06 })
    .sharpen({ sigma: 0.7 })
    .jpeg({ quality: 92 })
    .toBuffer();
}
