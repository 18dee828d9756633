/**
 * Does remove_background's quality hold beyond the exact eval files it was tuned on? Each garment
 * photo of ../shared/eval and its reference mask get the same label-preserving change (scale, JPEG
 * re-encode, flip, rotation, crop, exposure, white balance, noise); the cut-out of the changed
 * photo is scored like `bench -- quality` (IoU of alpha > 127, halo in the 3 px band outside the
 * mask) against the changed mask. Masks are resampled linearly and thresholded at half (the
 * reference boundary sits where a pixel is about half garment).
 *
 * Resampled variations: the halo band is 3 eval pixels wide, so it is scaled with the photo (3 x
 * scale output pixels, to the nearest step: 5 at 1.5x, 3 at 1000 px, 2 at 0.5x). The binary
 * reference keeps its own pixel rounding (about half an eval pixel) when resampled, so even an
 * ideal matte, the reference itself resampled as the photo is, scores a halo there: the summary
 * prints it beside the cut-out's ("ideal").
 *
 * Harder variations, where the local provider was found weak: `vig61` and `vig72` (a lens vignette,
 * the gain 1 - k r^2 on linear light, r the distance from the centre over the half diagonal, k =
 * 0.61 and 0.72: corners at 39% and 28% of the light; the mask unchanged), `noise6` (Gaussian
 * noise of sigma 6 levels), `jpeg55` (re-encoded at quality 55) and `tilt3` (photo and mask rotated
 * 3 degrees, the photo's revealed corners filled with the median of its outermost 4 px, the mask's
 * with 0, cropped back to the original size about the centre). All keep the mask's meaning: no
 * pixel changes between garment and background.
 *
 * `npm run -s bench -- quality-perturbed` runs every variation (about 19 x 41 cut-outs). To choose:
 * PERTURB=flip,jpeg60 (variations), PERTURB_IDS=00055_00,048769_1 (photos), PERTURB_OUT=/tmp/dir
 * (writes a diff PNG per photo under 0.92: white = both, red = extra, blue = missed garment).
 * Direct: `npx tsx test/bench/quality-perturbed.ts flip jpeg60`.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { removeBackground } from '../../src/core/providers/local/remove-background';
import { EVAL_DIR, garmentIds } from './quality';
import { fmt, type Row } from './shared';
import { whiteBalanceGains } from './white-balance';

type Pixels = { data: Buffer; width: number; height: number; channels: number };
/** A photo (3 channels) and its mask (1 channel, 0/255) changed the same way. */
type Pair = { photo: Pixels; mask: Pixels };
type Variation = {
  name: string;
  /** The changed pair; `encode` is how the photo reaches the tool (PNG unless the change is JPEG). */
  apply: (pair: Pair) => Promise<Pair>;
  encode?: (photo: Pixels) => Promise<Buffer>;
  /** Output pixels per eval pixel, for the changes that resample the photo. */
  scale?: (original: Pair) => number;
};

/** Width of the halo band at the eval's own size (`bench -- quality`), in pixels. */
const HALO_BAND = 3;
/** The band in the changed photo's pixels: the same width on the garment, to the nearest step. */
const haloBand = (variation: Variation, original: Pair): number =>
  Math.max(1, Math.round(HALO_BAND * (variation.scale?.(original) ?? 1)));

const raw = (p: Pixels) => ({
  raw: { width: p.width, height: p.height, channels: p.channels as 1 | 3 },
});

async function toPixels(img: Sharp): Promise<Pixels> {
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Resizes both: the photo with lanczos (as any editor would), the mask linearly then thresholded. */
async function resize(pair: Pair, width: number, height: number): Promise<Pair> {
  const photo = await toPixels(sharp(pair.photo.data, raw(pair.photo)).resize(width, height));
  const soft = await toPixels(
    sharp(pair.mask.data, raw(pair.mask))
      .resize(width, height, { kernel: 'linear' })
      .extractChannel(0),
  );
  for (let i = 0; i < soft.data.length; i++) soft.data[i] = soft.data[i]! >= 128 ? 255 : 0;
  return { photo, mask: soft };
}

export async function geometric(pair: Pair, op: (s: Sharp) => Sharp): Promise<Pair> {
  return {
    photo: await toPixels(op(sharp(pair.photo.data, raw(pair.photo)))),
    mask: await toPixels(op(sharp(pair.mask.data, raw(pair.mask))).extractChannel(0)),
  };
}

/** The garment's box in its mask and the side of the frame it comes nearest. */
export function nearestSide(mask: Pixels) {
  const { width: w, height: h, data: m } = mask;
  let [left, top, right, bottom] = [w, h, -1, -1];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      if (m[y * w + x]) {
        left = Math.min(left, x);
        right = Math.max(right, x);
        top = Math.min(top, y);
        bottom = Math.max(bottom, y);
      }
  const gaps = { left, top, right: w - 1 - right, bottom: h - 1 - bottom };
  const side = (Object.keys(gaps) as (keyof typeof gaps)[]).reduce((a, b) =>
    gaps[b] < gaps[a] ? b : a,
  );
  return { side, left, top, right, bottom };
}

/** Crops 10% off the side where the garment comes nearest the frame, so it likely touches it. */
async function cropNearestSide(pair: Pair): Promise<Pair> {
  const { width: w, height: h } = pair.mask;
  const { side } = nearestSide(pair.mask);
  const cw = side === 'left' || side === 'right' ? Math.round(w * 0.9) : w;
  const ch = side === 'top' || side === 'bottom' ? Math.round(h * 0.9) : h;
  const region = {
    left: side === 'left' ? w - cw : 0,
    top: side === 'top' ? h - ch : 0,
    width: cw,
    height: ch,
  };
  return geometric(pair, (s) => s.extract(region));
}

const LIN = Float64Array.from({ length: 256 }, (_, i) => {
  const v = i / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
});
const toSrgb = (v: number) => {
  const c = Math.max(0, Math.min(1, v));
  return Math.round(255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055));
};

/** Per-channel gains in linear light, applied to every pixel (clipped like a camera would). */
function gains(pair: Pair, g: [number, number, number]): Pair {
  const lut = g.map((k) => Uint8Array.from({ length: 256 }, (_, v) => toSrgb(LIN[v]! * k)));
  const data = Buffer.from(pair.photo.data);
  for (let i = 0; i < data.length; i++) data[i] = lut[i % 3]![data[i]!]!;
  return { photo: { ...pair.photo, data }, mask: pair.mask };
}

/** A small deterministic Gaussian (Box-Muller over a seeded xorshift). */
export function gaussianNoise(pair: Pair, sigma: number, seed: number): Pair {
  let s = seed >>> 0 || 1;
  const uniform = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) + 0.5) / 4294967296;
  };
  const data = Buffer.from(pair.photo.data);
  for (let i = 0; i < data.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(uniform()));
    const a = 2 * Math.PI * uniform();
    data[i] = Math.max(0, Math.min(255, Math.round(data[i]! + sigma * r * Math.cos(a))));
    if (i + 1 < data.length)
      data[i + 1] = Math.max(0, Math.min(255, Math.round(data[i + 1]! + sigma * r * Math.sin(a))));
  }
  return { photo: { ...pair.photo, data }, mask: pair.mask };
}

/** The gain `1 - k (r / r_corner)^2` on linear light: a lens vignette. */
function vignette(pair: Pair, k: number): Pair {
  const { width: w, height: h, channels } = pair.photo;
  const data = Buffer.from(pair.photo.data);
  const cornerSquared = (w / 2) ** 2 + (h / 2) ** 2;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const gain = 1 - (k * ((x - w / 2) ** 2 + (y - h / 2) ** 2)) / cornerSquared;
      for (let c = 0; c < 3; c++) {
        const i = (y * w + x) * channels + c;
        data[i] = toSrgb(LIN[data[i]!]! * gain);
      }
    }
  return { photo: { ...pair.photo, data }, mask: pair.mask };
}

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
  const turned = await toPixels(sharp(p.data, raw(p)).rotate(degrees, { background: fill }));
  return toPixels(
    sharp(turned.data, raw(turned)).extract({
      left: Math.floor((turned.width - p.width) / 2),
      top: Math.floor((turned.height - p.height) / 2),
      width: p.width,
      height: p.height,
    }),
  );
}

/** Photo and mask tilted alike; the mask thresholded at half again. */
async function tilt(pair: Pair, degrees: number): Promise<Pair> {
  const photo = await rotated(pair.photo, degrees, borderColour(pair.photo));
  const turned = await rotated(pair.mask, degrees, { r: 0, g: 0, b: 0 });
  const data = Buffer.alloc(turned.width * turned.height);
  for (let i = 0; i < data.length; i++)
    data[i] = turned.data[i * turned.channels]! >= 128 ? 255 : 0;
  return { photo, mask: { data, width: turned.width, height: turned.height, channels: 1 } };
}

const longTo1000 = (p: Pair) => 1000 / Math.max(p.photo.width, p.photo.height);

const png = (p: Pixels) =>
  sharp(p.data, raw(p)).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer();

export const VARIATIONS: Variation[] = [
  { name: 'original', apply: async (p) => p },
  {
    name: 'down0.5',
    apply: (p) => resize(p, Math.round(p.photo.width / 2), Math.round(p.photo.height / 2)),
    scale: () => 0.5,
  },
  {
    name: 'long1000',
    apply: (p) => {
      const k = longTo1000(p);
      return resize(p, Math.round(p.photo.width * k), Math.round(p.photo.height * k));
    },
    scale: longTo1000,
  },
  {
    name: 'up1.5',
    apply: (p) => resize(p, Math.round(p.photo.width * 1.5), Math.round(p.photo.height * 1.5)),
    scale: () => 1.5,
  },
  {
    name: 'jpeg60',
    apply: async (p) => p,
    encode: (photo) => sharp(photo.data, raw(photo)).jpeg({ quality: 60 }).toBuffer(),
  },
  { name: 'flip', apply: (p) => geometric(p, (s) => s.flop()) },
  { name: 'rot90', apply: (p) => geometric(p, (s) => s.rotate(90)) },
  { name: 'crop10', apply: cropNearestSide },
  { name: 'bright-15', apply: async (p) => gains(p, [0.85, 0.85, 0.85]) },
  { name: 'bright+10', apply: async (p) => gains(p, [1.1, 1.1, 1.1]) },
  { name: 'bright+15', apply: async (p) => gains(p, [1.15, 1.15, 1.15]) },
  { name: 'warm300K', apply: async (p) => gains(p, whiteBalanceGains(300)) },
  { name: 'cool300K', apply: async (p) => gains(p, whiteBalanceGains(-300)) },
  { name: 'noise3', apply: async (p) => gaussianNoise(p, 3, 0x5eed) },
  { name: 'vig61', apply: async (p) => vignette(p, 0.61) },
  { name: 'vig72', apply: async (p) => vignette(p, 0.72) },
  { name: 'noise6', apply: async (p) => gaussianNoise(p, 6, 0x5eed) },
  {
    name: 'jpeg55',
    apply: async (p) => p,
    encode: (photo) => sharp(photo.data, raw(photo)).jpeg({ quality: 55 }).toBuffer(),
  },
  { name: 'tilt3', apply: (p) => tilt(p, 3) },
];

/** Brightness as an exposure change: `bright-15` scales linear light by 0.85 (same for +10, +15). */

/** `ideal`: the halo of the reference itself resampled as the photo is (0 when not resampled). */
type Score = { id: string; iou: number; halo: number; ideal: number; band: number };

/** Pixels outside the mask within `r` steps (4-connected) of it: `bench quality`'s band at r = 3. */
function outerBand(mask: Buffer, w: number, h: number, r: number): Uint8Array {
  let grown = Uint8Array.from(mask, (v) => (v ? 1 : 0));
  for (let k = 0; k < r; k++) {
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

export async function scorePair(
  id: string,
  variation: Variation,
  original: Pair,
  out?: string,
): Promise<Score> {
  const { photo, mask } = await variation.apply(original);
  const input = await (variation.encode ?? png)(photo);
  const alpha = await sharp(await removeBackground(input))
    .extractChannel(3)
    .raw()
    .toBuffer();
  if (alpha.length !== mask.data.length) throw new Error(`${id} ${variation.name}: size changed`);
  let inter = 0;
  let union = 0;
  for (let i = 0; i < alpha.length; i++) {
    const p = alpha[i]! > 127;
    const m = mask.data[i]! > 0;
    if (p && m) inter++;
    if (p || m) union++;
  }
  const width = haloBand(variation, original);
  const band = outerBand(mask.data, mask.width, mask.height, width);
  const meanInBand = (values: Buffer) => {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < band.length; i++)
      if (band[i]) {
        sum += values[i]!;
        count++;
      }
    return count ? sum / count : 0;
  };
  const iou = union ? inter / union : 1;
  if (out && iou < 0.92)
    await writeDiff(path.join(out, `${variation.name}-${id}.png`), alpha, mask);
  const ideal = variation.scale ? meanInBand(await idealMatte(variation, original)) : 0;
  return { id, iou, halo: meanInBand(alpha), ideal, band: width };
}

/**
 * A perfect cut-out of the changed photo: the eval mask taken as the original's matte and changed
 * as the photo is (lanczos, so its edge pixels keep the share of garment they show).
 */
async function idealMatte(variation: Variation, original: Pair): Promise<Buffer> {
  const { data, width, height } = original.mask;
  const grey = Buffer.alloc(width * height * 3);
  for (let i = 0; i < data.length; i++) grey[i * 3] = grey[i * 3 + 1] = grey[i * 3 + 2] = data[i]!;
  const { photo } = await variation.apply({
    photo: { data: grey, width, height, channels: 3 },
    mask: original.mask,
  });
  const matte = Buffer.alloc(photo.width * photo.height);
  for (let i = 0; i < matte.length; i++) matte[i] = photo.data[i * photo.channels]!;
  return matte;
}

/** White where both say garment, red where only the cut-out does, blue where only the mask does. */
async function writeDiff(file: string, alpha: Buffer, mask: Pixels): Promise<void> {
  const rgb = Buffer.alloc(alpha.length * 3);
  for (let i = 0; i < alpha.length; i++) {
    const p = alpha[i]! > 127;
    const m = mask.data[i]! > 0;
    rgb[i * 3] = p ? 255 : m ? 0 : 40;
    rgb[i * 3 + 1] = p && m ? 255 : 40;
    rgb[i * 3 + 2] = m ? 255 : 40;
  }
  await sharp(rgb, { raw: { width: mask.width, height: mask.height, channels: 3 } })
    .png()
    .toFile(file);
}

export async function readPair(id: string): Promise<Pair> {
  const photo = await toPixels(
    sharp(path.join(EVAL_DIR, 'garments', `${id}.jpg`))
      .removeAlpha()
      .toColourspace('srgb'),
  );
  const soft = await toPixels(sharp(path.join(EVAL_DIR, 'masks', `${id}.png`)).extractChannel(0));
  for (let i = 0; i < soft.data.length; i++) soft.data[i] = soft.data[i]! >= 128 ? 255 : 0;
  return { photo, mask: soft };
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);
const list = (v: string | undefined) => (v ? v.split(',').filter(Boolean) : []);

export async function qualityPerturbed(
  names = list(process.env.PERTURB),
  ids = list(process.env.PERTURB_IDS),
): Promise<Row[]> {
  const all = garmentIds();
  if (!all.length) {
    console.log(`  no real photos at ${EVAL_DIR}: nothing to measure`);
    return [];
  }
  const chosen = names.length ? VARIATIONS.filter((v) => names.includes(v.name)) : VARIATIONS;
  const unknown = names.filter((n) => !VARIATIONS.some((v) => v.name === n));
  if (unknown.length)
    throw new Error(
      `unknown variation ${unknown.join(', ')}; choose from ${VARIATIONS.map((v) => v.name).join(', ')}`,
    );
  const photos = ids.length ? all.filter((id) => ids.includes(id)) : all;
  const out = process.env.PERTURB_OUT;
  if (out) fs.mkdirSync(out, { recursive: true });
  const scores = new Map<string, Score[]>(chosen.map((v) => [v.name, []]));
  console.log(`  IoU/halo per photo: ${chosen.map((v) => v.name).join(' ')}`);
  for (const id of photos) {
    const original = await readPair(id);
    const line: string[] = [];
    for (const v of chosen) {
      const s = await scorePair(id, v, original, out);
      scores.get(v.name)!.push(s);
      line.push(`${fmt(s.iou, 3)}/${fmt(s.halo, 0).padEnd(2)}`);
    }
    console.log(`  ${id.padEnd(10)} ${line.join(' ')}`);
  }
  console.log(
    `  ${photos.length} photos; per photo below 0.92 (or the 3 lowest when none):\n` +
      '  variation     mean IoU   min IoU  (photo)          halo  result',
  );
  const rows: Row[] = [];
  for (const v of chosen) {
    const s = scores.get(v.name)!;
    const meanIou = mean(s.map((x) => x.iou));
    const worst = s.reduce((a, b) => (b.iou < a.iou ? b : a));
    const halo = mean(s.map((x) => x.halo));
    const pass = meanIou >= 0.97 && worst.iou >= 0.92 && halo <= 8;
    const ideal = v.scale
      ? `  (band ${s[0]!.band} px; ideal matte ${fmt(mean(s.map((x) => x.ideal)), 1)})`
      : '';
    console.log(
      `  ${v.name.padEnd(12)} ${fmt(meanIou, 4).padStart(9)} ${fmt(worst.iou, 4).padStart(9)}  (${worst.id})`.padEnd(
        51,
      ) + `${fmt(halo, 1).padStart(5)}  ${pass ? 'PASS' : 'FAIL'}${ideal}`,
    );
    const low = [...s].sort((a, b) => a.iou - b.iou);
    const shown = low.filter((x) => x.iou < 0.92);
    console.log(
      `      ${(shown.length ? shown : low.slice(0, 3)).map((x) => `${x.id} ${fmt(x.iou, 3)}`).join(', ')}`,
    );
    // The mean halo hides which photos carry it: the three largest, with their IoU.
    const haloes = [...s].sort((a, b) => b.halo - a.halo).slice(0, 3);
    console.log(
      `      halo: ${haloes.map((x) => `${x.id} ${fmt(x.halo, 1)} (${fmt(x.iou, 3)})`).join(', ')}`,
    );
    rows.push({
      name: `remove_background ${v.name}: mean IoU / min IoU (${worst.id}) / halo`,
      measured: `${fmt(meanIou, 4)} / ${fmt(worst.iou, 4)} / ${fmt(halo, 1)}`,
      ratio: meanIou,
      target: '>=0.97 / >=0.92 / <=8',
      pass,
    });
  }
  return rows;
}

if (process.argv[1] === import.meta.filename) {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  await qualityPerturbed(args.length ? args : undefined);
}
