/**
 * Cut-out and retouch quality on the real photos of ../shared/eval (read in place, never copied):
 *  - remove_background per garment: IoU of alpha > 127 against the reference mask (255 = garment),
 *    the halo (mean alpha in the 3 px band outside the mask, in levels of 255) and the time,
 *    next to decoding and encoding the same photo with sharp alone;
 *  - amateur_to_pro per garment: backdrop whiteness, median Delta E 2000 inside the mask after
 *    removing the global white-balance shift, and the share of mask pixels bleached (lightened by
 *    more than 10 L*) or newly clipped to 255.
 * `npm run bench -- quality` prints them; test/integration/real-photos-quality.test.ts asserts them.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { removeBackground } from '../../src/core/providers/local/remove-background';
import { retouchPhoto } from '../../src/core/providers/local/retouch';
import { fmt, type Row } from './shared';

export const EVAL_DIR = path.resolve(import.meta.dirname, '../../../shared/eval');

export type CutoutScore = {
  id: string;
  iou: number;
  halo: number;
  ms: number;
  cpuMs: number;
  sharpMs: number;
};
export type RetouchScore = {
  id: string;
  backdrop: number;
  /** Share of the backdrop left visibly grey (a channel under 250): a cast shadow kept. */
  shaded: number;
  deltaE: number;
  bleached: number;
};

/** Garment ids that have both a photo and a reference mask. */
export function garmentIds(dir = EVAL_DIR): string[] {
  const garments = path.join(dir, 'garments');
  if (!fs.existsSync(garments)) return [];
  return fs
    .readdirSync(garments)
    .filter(
      (f) =>
        f.endsWith('.jpg') && fs.existsSync(path.join(dir, 'masks', f.replace(/\.jpg$/, '.png'))),
    )
    .map((f) => f.replace(/\.jpg$/, ''))
    .sort();
}

async function readMask(
  id: string,
  dir: string,
): Promise<{ mask: Uint8Array; width: number; height: number }> {
  const { data, info } = await sharp(path.join(dir, 'masks', `${id}.png`))
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    mask: Uint8Array.from(data, (v) => (v >= 128 ? 1 : 0)),
    width: info.width,
    height: info.height,
  };
}

/** Pixels outside the mask within `r` steps (4-connected) of it. */
function outerBand(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  let grown = mask;
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

export async function scoreCutout(id: string, dir = EVAL_DIR): Promise<CutoutScore> {
  const photo = await fs.promises.readFile(path.join(dir, 'garments', `${id}.jpg`));
  const { mask, width, height } = await readMask(id, dir);
  // Wall time, and the process's CPU time (what the cut-out costs on a machine shared with others).
  let start = performance.now();
  const cpu = process.cpuUsage();
  const cutout = await removeBackground(photo);
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  start = performance.now();
  const { data: decoded, info } = await sharp(photo).raw().toBuffer({ resolveWithObject: true });
  await sharp(decoded, { raw: { width: info.width, height: info.height, channels: info.channels } })
    .png({ compressionLevel: 4, adaptiveFiltering: false })
    .toBuffer();
  const sharpMs = performance.now() - start;
  const alpha = await sharp(cutout).extractChannel(3).raw().toBuffer();
  if (alpha.length !== mask.length) throw new Error(`${id}: cut-out is not ${width}x${height}`);
  let inter = 0;
  let union = 0;
  for (let i = 0; i < mask.length; i++) {
    const p = alpha[i]! > 127 ? 1 : 0;
    inter += p & mask[i]!;
    union += p | mask[i]!;
  }
  const band = outerBand(mask, width, height, 3);
  let haloSum = 0;
  let haloCount = 0;
  for (let i = 0; i < band.length; i++) {
    if (!band[i]) continue;
    haloSum += alpha[i]!;
    haloCount++;
  }
  return {
    id,
    iou: union ? inter / union : 1,
    halo: haloCount ? haloSum / haloCount : 0,
    ms,
    cpuMs,
    sharpMs,
  };
}

/** sRGB level (0-255) to linear light. */
export const LIN = Float64Array.from({ length: 256 }, (_, i) => {
  const v = i / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
});

/** CIELAB (D65) of a linear-light RGB colour. */
export function labOfLinear(r: number, g: number, b: number): [number, number, number] {
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const x = f((r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047);
  const y = f(r * 0.2126 + g * 0.7152 + b * 0.0722);
  const z = f((r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

/** CIEDE2000 colour difference. */
export function deltaE2000([L1, a1, b1]: number[], [L2, a2, b2]: number[]): number {
  const rad = Math.PI / 180;
  const C1 = Math.hypot(a1!, b1!);
  const C2 = Math.hypot(a2!, b2!);
  const Cm = (C1 + C2) / 2;
  const G = 0.5 * (1 - Math.sqrt(Cm ** 7 / (Cm ** 7 + 25 ** 7)));
  const ap1 = a1! * (1 + G);
  const ap2 = a2! * (1 + G);
  const Cp1 = Math.hypot(ap1, b1!);
  const Cp2 = Math.hypot(ap2, b2!);
  const hp = (a: number, b: number) =>
    a === 0 && b === 0 ? 0 : (Math.atan2(b, a) / rad + 360) % 360;
  const hp1 = hp(ap1, b1!);
  const hp2 = hp(ap2, b2!);
  const dL = L2! - L1!;
  const dC = Cp2 - Cp1;
  let dh = 0;
  if (Cp1 * Cp2 !== 0) {
    dh = hp2 - hp1;
    if (dh > 180) dh -= 360;
    else if (dh < -180) dh += 360;
  }
  const dH = 2 * Math.sqrt(Cp1 * Cp2) * Math.sin((dh / 2) * rad);
  const Lm = (L1! + L2!) / 2;
  const Cpm = (Cp1 + Cp2) / 2;
  let hm = hp1 + hp2;
  if (Cp1 * Cp2 !== 0)
    hm =
      Math.abs(hp1 - hp2) > 180
        ? (hp1 + hp2 + (hp1 + hp2 < 360 ? 360 : -360)) / 2
        : (hp1 + hp2) / 2;
  const T =
    1 -
    0.17 * Math.cos((hm - 30) * rad) +
    0.24 * Math.cos(2 * hm * rad) +
    0.32 * Math.cos((3 * hm + 6) * rad) -
    0.2 * Math.cos((4 * hm - 63) * rad);
  const dTheta = 30 * Math.exp(-(((hm - 275) / 25) ** 2));
  const Rc = 2 * Math.sqrt(Cpm ** 7 / (Cpm ** 7 + 25 ** 7));
  const Sl = 1 + (0.015 * (Lm - 50) ** 2) / Math.sqrt(20 + (Lm - 50) ** 2);
  const Sc = 1 + 0.045 * Cpm;
  const Sh = 1 + 0.015 * Cpm * T;
  const Rt = -Math.sin(2 * dTheta * rad) * Rc;
  return Math.sqrt((dL / Sl) ** 2 + (dC / Sc) ** 2 + (dH / Sh) ** 2 + Rt * (dC / Sc) * (dH / Sh));
}

export async function scoreRetouch(id: string, dir = EVAL_DIR): Promise<RetouchScore> {
  const photo = await fs.promises.readFile(path.join(dir, 'garments', `${id}.jpg`));
  const { mask, width, height } = await readMask(id, dir);
  const before = await sharp(photo).removeAlpha().raw().toBuffer();
  const after = await sharp(await retouchPhoto(photo))
    .removeAlpha()
    .raw()
    .toBuffer();
  if (after.length !== width * height * 3) throw new Error(`${id}: retouch changed the size`);
  // The backdrop: every pixel more than 3 px outside the garment.
  const near = outerBand(mask, width, height, 3);
  let backdropSum = 0;
  let backdropCount = 0;
  let shadedCount = 0;
  // Global white-balance shift: per-channel gains (linear light) fitted over the garment.
  const num = [0, 0, 0];
  const den = [0, 0, 0];
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) {
      if (!near[i]) {
        backdropSum += (after[i * 3]! + after[i * 3 + 1]! + after[i * 3 + 2]!) / 3;
        backdropCount++;
        if (Math.min(after[i * 3]!, after[i * 3 + 1]!, after[i * 3 + 2]!) < 250) shadedCount++;
      }
      continue;
    }
    for (let c = 0; c < 3; c++) {
      num[c]! += LIN[after[i * 3 + c]!]! * LIN[before[i * 3 + c]!]!;
      den[c]! += LIN[before[i * 3 + c]!]! ** 2;
    }
  }
  const gain = num.map((v, c) => (den[c]! ? v / den[c]! : 1));
  const deltas: number[] = [];
  let bleached = 0;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    const shifted = labOfLinear(
      ...([0, 1, 2].map((c) => Math.min(1, LIN[before[i * 3 + c]!]! * gain[c]!)) as [
        number,
        number,
        number,
      ]),
    );
    const got = labOfLinear(LIN[after[i * 3]!]!, LIN[after[i * 3 + 1]!]!, LIN[after[i * 3 + 2]!]!);
    deltas.push(deltaE2000(shifted, got));
    const newlyClipped = [0, 1, 2].some(
      (c) => after[i * 3 + c] === 255 && before[i * 3 + c]! < 250,
    );
    if (newlyClipped || got[0] - shifted[0] > 10) bleached++;
  }
  deltas.sort((a, b) => a - b);
  return {
    id,
    backdrop: backdropCount ? backdropSum / backdropCount : 255,
    shaded: backdropCount ? shadedCount / backdropCount : 0,
    deltaE: deltas[deltas.length >> 1] ?? 0,
    bleached: deltas.length ? bleached / deltas.length : 0,
  };
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);

export async function quality(): Promise<Row[]> {
  const ids = garmentIds();
  if (!ids.length) {
    console.log(`  no real photos at ${EVAL_DIR}: nothing to measure`);
    return [];
  }
  const cut: CutoutScore[] = [];
  console.log('  remove_background       IoU    halo   time     cpu   sharp decode+encode');
  for (const id of ids) {
    const s = await scoreCutout(id);
    cut.push(s);
    console.log(
      `  ${id.padEnd(22)} ${fmt(s.iou, 4)} ${fmt(s.halo, 1).padStart(6)} ${fmt(s.ms, 0).padStart(5)} ms ${fmt(s.cpuMs, 0).padStart(5)} ms ${fmt(s.sharpMs, 0).padStart(5)} ms`,
    );
  }
  const worst = [...cut].sort((a, b) => a.iou - b.iou).slice(0, 5);
  const minIou = Math.min(...cut.map((s) => s.iou));
  const meanIou = mean(cut.map((s) => s.iou));
  const meanHalo = mean(cut.map((s) => s.halo));
  const timeRatio = mean(cut.map((s) => s.ms)) / mean(cut.map((s) => s.sharpMs));
  console.log(
    `  mean IoU ${fmt(meanIou, 4)}, min ${fmt(minIou, 4)}; worst: ${worst.map((s) => `${s.id} ${fmt(s.iou, 3)}`).join(', ')}`,
  );
  console.log(
    `  halo mean ${fmt(meanHalo, 1)}/255, max ${fmt(Math.max(...cut.map((s) => s.halo)), 1)}/255`,
  );
  console.log(
    `  time ${fmt(mean(cut.map((s) => s.ms)), 0)} ms per photo (CPU ${fmt(mean(cut.map((s) => s.cpuMs)), 0)} ms) vs ${fmt(mean(cut.map((s) => s.sharpMs)), 1)} ms for sharp decode+encode (${fmt(timeRatio, 1)}x)`,
  );
  const ret: RetouchScore[] = [];
  console.log('  amateur_to_pro          backdrop  grey  median dE2000  bleached');
  for (const id of ids) {
    const s = await scoreRetouch(id);
    ret.push(s);
    console.log(
      `  ${id.padEnd(22)} ${fmt(s.backdrop, 1).padStart(8)} ${fmt(100 * s.shaded, 2).padStart(5)}% ${fmt(s.deltaE, 2).padStart(14)} ${fmt(100 * s.bleached, 2).padStart(8)} %`,
    );
  }
  const maxDe = Math.max(...ret.map((s) => s.deltaE));
  const minBackdrop = Math.min(...ret.map((s) => s.backdrop));
  const maxBleached = Math.max(...ret.map((s) => s.bleached));
  const maxShaded = Math.max(...ret.map((s) => s.shaded));
  console.log(
    `  median dE2000 mean ${fmt(mean(ret.map((s) => s.deltaE)), 2)}, max ${fmt(maxDe, 2)}; backdrop min ${fmt(minBackdrop, 1)}, grey (< 250) max ${fmt(100 * maxShaded, 2)} %; bleached max ${fmt(100 * maxBleached, 2)} %`,
  );
  return [
    {
      name: `remove_background mean IoU over ${ids.length} real garments`,
      measured: fmt(meanIou, 4),
      ratio: meanIou,
      target: '>= 0.97',
      pass: meanIou >= 0.97,
    },
    {
      name: 'remove_background min IoU',
      measured: fmt(minIou, 4),
      ratio: minIou,
      target: '>= 0.92',
      pass: minIou >= 0.92,
    },
    {
      name: 'remove_background mean halo (levels of 255)',
      measured: fmt(meanHalo, 1),
      ratio: meanHalo,
      target: '<= 8',
      pass: meanHalo <= 8,
    },
    {
      name: 'remove_background time vs sharp decode+encode',
      measured: `${fmt(mean(cut.map((s) => s.ms)), 0)} ms vs ${fmt(mean(cut.map((s) => s.sharpMs)), 1)} ms`,
      ratio: timeRatio,
      target: 'report',
      pass: true,
    },
    {
      name: 'amateur_to_pro worst median dE2000',
      measured: fmt(maxDe, 2),
      ratio: maxDe,
      target: '<= 3',
      pass: maxDe <= 3,
    },
    {
      name: 'amateur_to_pro darkest backdrop',
      measured: fmt(minBackdrop, 1),
      ratio: minBackdrop,
      target: '>= 250',
      pass: minBackdrop >= 250,
    },
    {
      name: 'amateur_to_pro most backdrop left grey (< 250)',
      measured: `${fmt(100 * maxShaded, 2)} %`,
      ratio: maxShaded,
      target: 'report',
      pass: true,
    },
  ];
}

if (process.argv[1] === import.meta.filename) await quality();
