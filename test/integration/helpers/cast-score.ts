/**
 * amateur_to_pro scored on an eval garment (../shared/eval) given a colour cast, or put on a
 * coloured backdrop, against the original photo inside its reference mask.
 */
import path from 'node:path';
import sharp from 'sharp';
import { dilate } from '../../../src/core/providers/local/matting/morphology';
import { retouchPhoto } from '../../../src/core/providers/local/retouch';
import { deltaE2000, EVAL_DIR, labOfLinear, LIN } from '../../bench/quality';

/** Per-channel gain and offset (levels) over the whole photo, as a lamp or a camera's white balance. */
export type Cast = { gain: readonly number[]; offset?: readonly number[] };

/** A change to the photo's raw RGB pixels (the mask unchanged): a white balance, an exposure. */
export type Change = (rgb: Buffer) => Buffer;

const toSrgb = (v: number) => {
  const c = Math.max(0, Math.min(1, v));
  return Math.round(255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055));
};

/** Per-channel gains on linear light, clipped at white as a camera would. */
export function linearGains(g: readonly number[]): Change {
  const lut = g.map((k) => Uint8Array.from({ length: 256 }, (_, v) => toSrgb(LIN[v]! * k)));
  return (rgb) => {
    const out = Buffer.from(rgb);
    for (let i = 0; i < out.length; i++) out[i] = lut[i % 3]![out[i]!]!;
    return out;
  };
}

export type CastScore = {
  /** Median Delta E 2000 with the brightness alone matched: what the white balance left. */
  castLeft: number;
  /** Median Delta E 2000 with each channel matched: what no global shift explains. */
  damage: number;
  /** Mean level of the backdrop (outside the mask). */
  backdrop: number;
  /**
   * Backdrop more than 3 px outside the mask (as `scoreRetouch`): its median level (mean of the
   * channels) and the share of it with a channel under 250 (shading, blotches, a grey box).
   */
  backdropMedian: number;
  shaded: number;
  /**
   * Share of the garment newly clipped at 255 (below 250 in the original and in the photo given)
   * or lightened by more than 10 L* against the original with each channel matched.
   */
  bleached: number;
};

const median = (v: number[]) => v.sort((a, b) => a - b)[v.length >> 1] ?? 0;

/** The garment as photographed (mask edge softened 1 px) on a flat backdrop of this colour. */
async function onBackdrop(
  original: Buffer,
  mask: Buffer,
  width: number,
  height: number,
  colour: readonly number[],
): Promise<Buffer> {
  const soft = await sharp(mask, { raw: { width, height, channels: 1 } })
    .blur(1)
    .extractChannel(0)
    .raw()
    .toBuffer();
  const out = Buffer.alloc(original.length);
  for (let i = 0; i < soft.length; i++) {
    const a = soft[i]! / 255;
    for (let c = 0; c < 3; c++) {
      out[i * 3 + c] = Math.round(original[i * 3 + c]! * a + colour[c]! * (1 - a));
    }
  }
  return out;
}

export async function scoreCast(
  id: string,
  change: { cast?: Cast; backdrop?: readonly number[]; photo?: Change },
  tool: (jpeg: Buffer) => Promise<Buffer> = retouchPhoto,
): Promise<CastScore> {
  const { data: original, info } = await sharp(path.join(EVAL_DIR, 'garments', `${id}.jpg`))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const mask = await sharp(path.join(EVAL_DIR, 'masks', `${id}.png`))
    .extractChannel(0)
    .raw()
    .toBuffer();
  let shot = change.backdrop
    ? await onBackdrop(original, mask, width, height, change.backdrop)
    : original;
  if (change.photo) shot = change.photo(shot);
  let photo = sharp(shot, { raw: { width, height, channels: 3 } });
  if (change.cast)
    photo = photo.linear([...change.cast.gain], [...(change.cast.offset ?? [0, 0, 0])]);
  const given = await photo.raw().toBuffer();
  const after = await sharp(
    await tool(
      await sharp(given, { raw: { width, height, channels: 3 } })
        .jpeg({ quality: 92 })
        .toBuffer(),
    ),
  )
    .removeAlpha()
    .raw()
    .toBuffer();
  const num = [0, 0, 0];
  const den = [0, 0, 0];
  const backdropLevels: number[] = [];
  let backdropSum = 0;
  let shaded = 0;
  const garment = Uint8Array.from(mask, (v) => (v >= 128 ? 1 : 0));
  const near = dilate(garment, width, height, 3);
  for (let i = 0; i < mask.length; i++) {
    if (!garment[i]) {
      const level = (after[i * 3]! + after[i * 3 + 1]! + after[i * 3 + 2]!) / 3;
      backdropSum += level;
      if (near[i]) continue;
      backdropLevels.push(level);
      if (Math.min(after[i * 3]!, after[i * 3 + 1]!, after[i * 3 + 2]!) < 250) shaded++;
      continue;
    }
    // A pixel the photo given clipped tells only "at least white": it stays out of the fit, or
    // an exposure that clipped a garment read as a smaller gain than it was.
    if (Math.max(given[i * 3]!, given[i * 3 + 1]!, given[i * 3 + 2]!) >= 254) continue;
    for (let c = 0; c < 3; c++) {
      num[c]! += LIN[after[i * 3 + c]!]! * LIN[original[i * 3 + c]!]!;
      den[c]! += LIN[original[i * 3 + c]!]! ** 2;
    }
  }
  const gain = num.map((v, c) => v / den[c]!);
  const common = (num[0]! + num[1]! + num[2]!) / (den[0]! + den[1]! + den[2]!);
  const castLeft: number[] = [];
  const damage: number[] = [];
  let bleached = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i]! < 128) continue;
    const got = labOfLinear(LIN[after[i * 3]!]!, LIN[after[i * 3 + 1]!]!, LIN[after[i * 3 + 2]!]!);
    const shifted = (g: number[]) =>
      labOfLinear(
        ...([0, 1, 2].map((c) => Math.min(1, LIN[original[i * 3 + c]!]! * g[c]!)) as [
          number,
          number,
          number,
        ]),
      );
    castLeft.push(deltaE2000(shifted([common, common, common]), got));
    const matched = shifted(gain);
    damage.push(deltaE2000(matched, got));
    const newlyClipped = [0, 1, 2].some(
      (c) => after[i * 3 + c] === 255 && original[i * 3 + c]! < 250 && given[i * 3 + c]! < 250,
    );
    if (newlyClipped || got[0] - matched[0] > 10) bleached++;
  }
  const backdrop = backdropSum / (mask.length - castLeft.length);
  return {
    castLeft: median(castLeft),
    damage: median(damage),
    backdrop,
    backdropMedian: median(backdropLevels),
    shaded: shaded / Math.max(1, backdropLevels.length),
    bleached: bleached / castLeft.length,
  };
}
