/**
 * amateur_to_pro scored on an eval garment (../shared/eval) given a colour cast, or put on a
 * coloured backdrop, against the original photo inside its reference mask.
 */
import path from 'node:path';
import sharp from 'sharp';
import { retouchPhoto } from '../../../src/core/providers/local/retouch';
import { deltaE2000, EVAL_DIR, labOfLinear, LIN } from '../../bench/quality';

/** Per-channel gain and offset (levels) over the whole photo, as a lamp or a camera's white balance. */
export type Cast = { gain: readonly number[]; offset?: readonly number[] };

export type CastScore = {
  /** Median Delta E 2000 with the brightness alone matched: what the white balance left. */
  castLeft: number;
  /** Median Delta E 2000 with each channel matched: what no global shift explains. */
  damage: number;
  /** Mean level of the backdrop (outside the mask). */
  backdrop: number;
  /** Share of the garment newly clipped at 255 or lightened by more than 10 L*. */
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
  change: { cast?: Cast; backdrop?: readonly number[] },
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
  const shot = change.backdrop
    ? await onBackdrop(original, mask, width, height, change.backdrop)
    : original;
  let photo = sharp(shot, { raw: { width, height, channels: 3 } });
  if (change.cast)
    photo = photo.linear([...change.cast.gain], [...(change.cast.offset ?? [0, 0, 0])]);
  const after = await sharp(await retouchPhoto(await photo.jpeg({ quality: 92 }).toBuffer()))
    .removeAlpha()
    .raw()
    .toBuffer();
  const num = [0, 0, 0];
  const den = [0, 0, 0];
  let backdrop = 0;
  let backdropCount = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i]! < 128) {
      backdrop += (after[i * 3]! + after[i * 3 + 1]! + after[i * 3 + 2]!) / 3;
      backdropCount++;
      continue;
    }
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
      (c) => after[i * 3 + c] === 255 && original[i * 3 + c]! < 250,
    );
    if (newlyClipped || got[0] - matched[0] > 10) bleached++;
  }
  return {
    castLeft: median(castLeft),
    damage: median(damage),
    backdrop: backdrop / backdropCount,
    bleached: bleached / castLeft.length,
  };
}
