/**
 * amateur_to_pro: the backdrop goes to clean white and the white balance is corrected, while the
 * subject keeps its colours. The backdrop (which should be neutral) gives per-channel gains that
 * neutralise the cast; those gains alone are applied to the subject (no contrast stretch, no
 * saturation boost, no sharpening: they bleached dark garments and shifted product colours). The matte then
 * blends the subject over pure white, so the backdrop, its shadows and blotches disappear.
 */
import sharp from 'sharp';
import { decodeMeta, open } from './image-io';
import { computeMatte, matteAt } from './remove-background';

/** Gains that make the backdrop's mean neutral without changing its brightness. */
function neutralGains(data: Buffer, alpha: Buffer, pixels: number): [number, number, number] {
  const sum = [0, 0, 0];
  let count = 0;
  for (let i = 0; i < pixels; i++) {
    if (alpha[i]! >= 8) continue;
    for (let c = 0; c < 3; c++) sum[c]! += data[i * 3 + c]!;
    count++;
  }
  if (count < pixels * 0.02) return [1, 1, 1];
  const mean = sum.map((s) => s / count);
  const grey = (mean[0]! + mean[1]! + mean[2]!) / 3;
  // A strongly coloured backdrop is a choice, not a cast: correct only moderate casts.
  const gains = mean.map((m) => grey / Math.max(1, m));
  if (gains.some((g) => g < 0.85 || g > 1.15)) return [1, 1, 1];
  return gains as [number, number, number];
}

export async function retouchPhoto(input: Buffer): Promise<Buffer> {
  await decodeMeta(input);
  const { data, info } = await open(input).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const alpha = await matteAt(await computeMatte(input), width, height);
  const gains = neutralGains(data, alpha, width * height);
  const out = Buffer.alloc(data.length);
  for (let i = 0; i < width * height; i++) {
    const a = alpha[i]! / 255;
    for (let c = 0; c < 3; c++) {
      const subject = Math.min(255, data[i * 3 + c]! * gains[c]!);
      out[i * 3 + c] = Math.round(subject * a + 255 * (1 - a));
    }
  }
  // No sharpening: on prints and knits it moves every pixel's colour (median Delta E 2-6).
  return sharp(out, { raw: { width, height, channels: 3 } }).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).toBuffer();
}
