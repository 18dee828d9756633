/**
 * Wall kept in people cut-outs (issue 11 item 2), measured without reference masks (there are
 * none for ../shared/eval/people): the share of the cut-out's opaque pixels (alpha > 127) that
 * look like the wall. The wall's colour model is read from the frame (a 4 px ring, where these
 * photos show wall or floor): its chromaticity (r, g over r + g + b, the median) and luminance
 * range. A kept pixel counts as wall when its chromaticity is within 0.012 of the wall's, its
 * luminance within 0.45x the frame's 2nd percentile to 1.15x its 98th (a cast shadow keeps the
 * wall's chroma at lower luminance, uneven light scales it a little up), and it is smooth (the
 * luminance of its 7x7 box varies by at most 2 levels, standard deviation): wall and shadows
 * are, hair, skin texture and fabric folds mostly are not.
 *
 * What it cannot tell apart: smooth subject pixels of the wall's colour (a white dress on a grey
 * wall, a grey tee on grey) count too, the same before and after a change that leaves the figure
 * whole, so the figure is a floor under the share, not zero; compare photos with themselves.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { removeBackground } from '../../src/core/providers/local/remove-background';

export const PEOPLE_DIR = path.resolve(import.meta.dirname, '../../../shared/eval/people');

export function peoplePhotos(dir = PEOPLE_DIR): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => /\.(jpe?g|png)$/i.test(f))
    .sort();
}

const luma = (r: number, g: number, b: number) => 0.299 * r + 0.587 * g + 0.114 * b;

/** Share (0..1) of the cut-out's opaque pixels that are wall-like; see the module comment. */
export function wallShare(rgba: Uint8Array, w: number, h: number): number {
  const n = w * h;
  const ring: number[] = [];
  const R = 4;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      if (x < R || y < R || x >= w - R || y >= h - R) ring.push(y * w + x);
  const cr: number[] = [];
  const cg: number[] = [];
  const ls: number[] = [];
  for (const i of ring) {
    const r = rgba[i * 4]!;
    const g = rgba[i * 4 + 1]!;
    const b = rgba[i * 4 + 2]!;
    const s = r + g + b + 1;
    cr.push(r / s);
    cg.push(g / s);
    ls.push(luma(r, g, b));
  }
  const q = (v: number[], p: number) => v.sort((a, b) => a - b)[Math.floor(p * (v.length - 1))]!;
  const wr = q(cr, 0.5);
  const wg = q(cg, 0.5);
  const lo = 0.45 * q(ls, 0.02);
  const hi = Math.min(255, 1.15 * q(ls, 0.98));
  // Integral images of luminance and its square, for the 7x7 box deviation.
  const L = new Float64Array(n);
  for (let i = 0; i < n; i++) L[i] = luma(rgba[i * 4]!, rgba[i * 4 + 1]!, rgba[i * 4 + 2]!);
  const S = new Float64Array((w + 1) * (h + 1));
  const S2 = new Float64Array((w + 1) * (h + 1));
  for (let y = 0; y < h; y++) {
    let a = 0;
    let a2 = 0;
    for (let x = 0; x < w; x++) {
      const v = L[y * w + x]!;
      a += v;
      a2 += v * v;
      S[(y + 1) * (w + 1) + x + 1] = S[y * (w + 1) + x + 1]! + a;
      S2[(y + 1) * (w + 1) + x + 1] = S2[y * (w + 1) + x + 1]! + a2;
    }
  }
  const box = (T: Float64Array, x0: number, y0: number, x1: number, y1: number) =>
    T[y1 * (w + 1) + x1]! - T[y0 * (w + 1) + x1]! - T[y1 * (w + 1) + x0]! + T[y0 * (w + 1) + x0]!;
  let kept = 0;
  let wall = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (rgba[i * 4 + 3]! <= 127) continue;
      kept++;
      const r = rgba[i * 4]!;
      const g = rgba[i * 4 + 1]!;
      const b = rgba[i * 4 + 2]!;
      const s = r + g + b + 1;
      if (Math.abs(r / s - wr) > 0.012 || Math.abs(g / s - wg) > 0.012) continue;
      if (L[i]! < lo || L[i]! > hi) continue;
      const x0 = Math.max(0, x - 3);
      const y0 = Math.max(0, y - 3);
      const x1 = Math.min(w, x + 4);
      const y1 = Math.min(h, y + 4);
      const k = (x1 - x0) * (y1 - y0);
      const m = box(S, x0, y0, x1, y1) / k;
      const sd = Math.sqrt(Math.max(0, box(S2, x0, y0, x1, y1) / k - m * m));
      if (sd <= 2) wall++;
    }
  }
  return kept ? wall / kept : 0;
}

/** remove_background on one people photo, and the wall share of its cut-out. */
export async function peopleWall(name: string, dir = PEOPLE_DIR): Promise<number> {
  const cut = await removeBackground(await fs.promises.readFile(path.join(dir, name)));
  const { data, info } = await sharp(cut).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return wallShare(data, info.width, info.height);
}

/**
 * Share (0..1) of the frame's lowest `band` of rows that the cut-out keeps opaque (alpha > 127).
 * Where a figure stands on a floor seen down to the bottom edge, a kept floor fills that band;
 * the legs and shoes alone cover a small part of it.
 */
export function lowerBandKept(rgba: Uint8Array, w: number, h: number, band = 0.2): number {
  const y0 = Math.floor((1 - band) * h);
  let kept = 0;
  for (let y = y0; y < h; y++)
    for (let x = 0; x < w; x++) kept += rgba[(y * w + x) * 4 + 3]! > 127 ? 1 : 0;
  return kept / ((h - y0) * w);
}

/** remove_background on one people photo, and the share of its lowest rows it keeps. */
export async function peopleLowerBand(name: string, dir = PEOPLE_DIR): Promise<number> {
  const cut = await removeBackground(await fs.promises.readFile(path.join(dir, name)));
  const { data, info } = await sharp(cut).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return lowerBandKept(data, info.width, info.height);
}

/** The cut-out's opaque pixels (alpha > 127), 1 per pixel. */
async function opaque(photo: Buffer): Promise<Uint8Array> {
  const cut = await removeBackground(photo);
  const { data, info } = await sharp(cut).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const mask = new Uint8Array(info.width * info.height);
  for (let i = 0; i < mask.length; i++) mask[i] = data[i * 4 + 3]! > 127 ? 1 : 0;
  return mask;
}

/**
 * Exposure changes a shop's photos go through: brighter and darker by a gain on every channel
 * (clipping at 255 as a camera or an edit does), and a warmer white balance.
 */
export const EXPOSURES: Record<string, (photo: Buffer) => Promise<Buffer>> = {
  'b+10': (p) => sharp(p).removeAlpha().linear(1.1, 0).png().toBuffer(),
  'b+20': (p) => sharp(p).removeAlpha().linear(1.2, 0).png().toBuffer(),
  'd-15': (p) => sharp(p).removeAlpha().linear(0.85, 0).png().toBuffer(),
  'd-20': (p) => sharp(p).removeAlpha().linear(0.8, 0).png().toBuffer(),
  warm: (p) =>
    sharp(p)
      .removeAlpha()
      .recomb([
        [1.06, 0, 0],
        [0, 1, 0],
        [0, 0, 0.9],
      ])
      .png()
      .toBuffer(),
};

/**
 * Exposure consistency (no reference masks needed): per exposure change, the IoU of the changed
 * copy's cut-out against the photo's own cut-out (alpha > 127). A figure that comes out whole
 * either way scores about 0.99; a white top lost to a clipped wall far less.
 */
export async function peopleExposure(
  name: string,
  dir = PEOPLE_DIR,
): Promise<Record<string, number>> {
  const photo = await fs.promises.readFile(path.join(dir, name));
  const base = await opaque(photo);
  const out: Record<string, number> = {};
  for (const [label, change] of Object.entries(EXPOSURES)) {
    const mask = await opaque(await change(photo));
    let inter = 0;
    let union = 0;
    for (let i = 0; i < base.length; i++) {
      inter += base[i]! & mask[i]!;
      union += base[i]! | mask[i]!;
    }
    out[label] = union ? inter / union : 1;
  }
  return out;
}

/**
 * `npx tsx test/bench/people-wall.ts`: each people photo's wall-like share, and their mean.
 * With `--exposure`: also each photo's exposure-consistency IoU per change, and their mean/min.
 */
async function printShares(exposure: boolean): Promise<void> {
  const shares: number[] = [];
  const ious: Record<string, number[]> = {};
  for (const name of peoplePhotos()) {
    const share = await peopleWall(name);
    shares.push(share);
    let line = `${name} wall-like ${(100 * share).toFixed(2)}%`;
    if (exposure) {
      for (const [label, iou] of Object.entries(await peopleExposure(name))) {
        (ious[label] ??= []).push(iou);
        line += ` ${label} ${iou.toFixed(3)}`;
      }
    }
    console.log(line);
  }
  const mean = shares.reduce((a, b) => a + b, 0) / Math.max(1, shares.length);
  console.log(`mean wall-like share ${(100 * mean).toFixed(2)}% over ${shares.length} photos`);
  for (const [label, v] of Object.entries(ious)) {
    const m = v.reduce((a, b) => a + b, 0) / v.length;
    console.log(`${label} IoU vs original: mean ${m.toFixed(3)}, min ${Math.min(...v).toFixed(3)}`);
  }
}

if (process.argv[1] === import.meta.filename)
  await printShares(process.argv.includes('--exposure'));
