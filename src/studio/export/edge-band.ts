/**
 * The frame's edges: whether an edge is plain backdrop (so padding can continue it with its
 * colour), and whether an exported image carries a smeared band (edge pixels repeated outwards:
 * consecutive rows or columns nearly identical while each one still varies along its length).
 */
import type { RawImage, Rgb } from './product-bbox';

export type Side = 'top' | 'bottom' | 'left' | 'right';
export const SIDES: readonly Side[] = ['top', 'bottom', 'left', 'right'];

/** Pixel offsets of line `k` (0 = the outermost) along `side`. */
function line(img: RawImage, side: Side, k: number): number[] {
  const { width: w, height: h } = img;
  const out: number[] = [];
  if (side === 'top' || side === 'bottom') {
    const y = side === 'top' ? k : h - 1 - k;
    for (let x = 0; x < w; x++) out.push(y * w + x);
  } else {
    const x = side === 'left' ? k : w - 1 - k;
    for (let y = 0; y < h; y++) out.push(y * w + x);
  }
  return out;
}

const luma = (img: RawImage, p: number): number => {
  const i = p * img.channels;
  return 0.299 * img.data[i]! + 0.587 * img.data[i + 1]! + 0.114 * img.data[i + 2]!;
};

/**
 * The edge's median colour (with its alpha on RGBA images), and whether it is plain: 97% of its
 * outer 3 lines within 10 levels of it, or a transparent edge.
 */
export function edgeBackdrop(
  img: RawImage,
  side: Side,
): { colour: Rgb & { alpha: number }; plain: boolean } {
  const pixels = [0, 1, 2].flatMap((k) => line(img, side, k));
  const channel = (c: number) =>
    pixels.map((p) => img.data[p * img.channels + c]!).sort((a, b) => a - b)[pixels.length >> 1]!;
  const alpha = img.channels === 4 ? channel(3) : 255;
  if (alpha < 128) return { colour: { r: 0, g: 0, b: 0, alpha: 0 }, plain: true };
  const colour = { r: channel(0), g: channel(1), b: channel(2), alpha: 255 };
  let near = 0;
  for (const p of pixels) {
    const i = p * img.channels;
    if (
      Math.abs(img.data[i]! - colour.r) <= 10 &&
      Math.abs(img.data[i + 1]! - colour.g) <= 10 &&
      Math.abs(img.data[i + 2]! - colour.b) <= 10
    )
      near++;
  }
  return { colour, plain: near >= 0.97 * pixels.length };
}

/** Consecutive lines closer than this (mean absolute luma difference) count as repeats. */
const REPEAT = 0.75;
/** A line varying less than this along its length is flat colour, not a smear. */
const FLAT = 2;
/** A repeated band at least this deep (px) is a smear. */
export const MAX_SMEAR_PX = 6;

/**
 * Depth (px) of the smeared band at each side: how many lines from the edge repeat the next one
 * while carrying detail along their length. Flat padding scores 0.
 */
export function smearBands(img: RawImage): Record<Side, number> {
  const out = { top: 0, bottom: 0, left: 0, right: 0 };
  for (const side of SIDES) {
    const limit = Math.floor((side === 'top' || side === 'bottom' ? img.height : img.width) / 3);
    let prev = line(img, side, 0).map((p) => luma(img, p));
    // A smear repeats the edge's own detail outwards, so its outermost line carries it. Flat
    // padding at the edge is not one, however far its near-repeats run on into the product (a
    // straight-sided garment's columns differ little: 03032_00 cool-cast read as 370 px).
    if (spread(prev) < FLAT) continue;
    const outermost = prev;
    const base = [...outermost].sort((a, b) => a - b)[outermost.length >> 1]!;
    let depth = 0;
    let detail = 0;
    for (let k = 1; k < limit; k++) {
      const next = line(img, side, k).map((p) => luma(img, p));
      let diff = 0;
      for (let j = 0; j < next.length; j++) diff += Math.abs(next[j]! - prev[j]!);
      if (diff / next.length >= REPEAT) break;
      if (driftFromEdge(outermost, next, base) >= EDGE_DRIFT) break;
      if (outlineDrift(outermost, next) >= EDGE_DRIFT) break;
      depth = k;
      detail = Math.max(detail, spread(prev));
      prev = next;
    }
    out[side] = detail >= FLAT ? depth : 0;
  }
  return out;
}

/** Levels off the edge line's median from which a pixel is part of its detail. */
const DETAIL_LEVELS = 8;
/** A line drifted this far (mean levels over the detail) from the outermost one is not its copy. */
const EDGE_DRIFT = 4;

/**
 * How far a line has drifted from the outermost one, over the pixels where either carries detail.
 * A smear repeats the edge line itself, so it stays close however deep; a photo's own rows only
 * change slowly from one to the next (an upscaled figure cut by the frame: 221 px read as a smear
 * when only neighbouring rows, diluted by the white around a narrow figure, were compared).
 */
function driftFromEdge(outermost: number[], next: number[], base: number): number {
  let diff = 0;
  let count = 0;
  for (let j = 0; j < next.length; j++) {
    if (
      Math.abs(outermost[j]! - base) <= DETAIL_LEVELS &&
      Math.abs(next[j]! - base) <= DETAIL_LEVELS
    )
      continue;
    diff += Math.abs(next[j]! - outermost[j]!);
    count++;
  }
  return count === 0 ? 0 : diff / count;
}

/**
 * How far a line has drifted from the outermost one where that one has outlines (weighted by its
 * gradient along the line). A smear repeats the outlines in place; a photo enlarged past its own
 * edge moves them, however slowly its smooth parts change: 01008_00's legs cut by the frame,
 * enlarged 2.4x, read as a 16 px band when the skin between the outlines outweighed them.
 */
function outlineDrift(outermost: number[], next: number[]): number {
  let diff = 0;
  let weight = 0;
  for (let j = 1; j < next.length - 1; j++) {
    const gradient = Math.abs(outermost[j + 1]! - outermost[j - 1]!) / 2;
    if (gradient < DETAIL_LEVELS) continue;
    diff += gradient * Math.abs(next[j]! - outermost[j]!);
    weight += gradient;
  }
  return weight === 0 ? 0 : diff / weight;
}

/** Mean absolute deviation of a line from its own smooth trend (31-px running mean). */
function spread(values: number[]): number {
  const r = 15;
  let sum = 0;
  let total = 0;
  const prefix = new Float64Array(values.length + 1);
  for (let j = 0; j < values.length; j++) prefix[j + 1] = prefix[j]! + values[j]!;
  for (let j = 0; j < values.length; j++) {
    const a = Math.max(0, j - r);
    const b = Math.min(values.length, j + r + 1);
    sum += Math.abs(values[j]! - (prefix[b]! - prefix[a]!) / (b - a));
    total++;
  }
  return total === 0 ? 0 : sum / total;
}

/** Levels off the edge's smooth trend from which a pixel is the subject (or a scene's detail). */
const OFF_TREND = 12;
/** An edge is continued only when at most this share of it is subject... */
const MAX_SUBJECT_SHARE = 0.35;
/** ...and its backdrop pixels keep within this mean (levels) of the smooth trend. */
const MAX_BACKDROP_DETAIL = 3;

/**
 * The backdrop along an edge as a smooth line (RGBA, one entry per position along the side), and
 * whether the edge can be continued with it: a wall lit unevenly (a gradient, a vignette) or a
 * subject touching the frame over a short stretch is still a backdrop to extend, where a flat
 * median colour left a visible step at the seam and a crop cut through the figure. Subject pixels
 * (far off the trend) are bridged by interpolation; a busy scene (too much off the trend, or
 * detail all along) is not extendable. `edge` is the bridged line before smoothing, `raw` the
 * outer 3 lines' mean as they are (nothing bridged).
 */
export function backdropLine(
  img: RawImage,
  side: Side,
): { line: Float32Array; edge: Float32Array; raw: Float32Array; extendable: boolean } {
  const rows = [0, 1, 2].map((k) => line(img, side, k));
  const n = rows[0]!.length;
  const line4 = new Float32Array(n * 4);
  for (let j = 0; j < n; j++)
    for (let c = 0; c < 4; c++) {
      let sum = 0;
      for (const r of rows) sum += c < img.channels ? img.data[r[j]! * img.channels + c]! : 255;
      line4[j * 4 + c] = sum / rows.length;
    }
  const { alpha } = edgeBackdrop(img, side).colour;
  if (alpha === 0) {
    // A cut-out's transparent edge: continue the transparency.
    const none = () => new Float32Array(n * 4);
    return { line: none(), edge: none(), raw: none(), extendable: true };
  }
  const window = Math.max(15, Math.round(n / 6)) | 1;
  let filled: Float32Array = Float32Array.from(line4);
  let off = new Uint8Array(n);
  for (let pass = 0; pass < 3; pass++) {
    const trend = runningMedian(filled, n, window);
    off = new Uint8Array(n);
    for (let j = 0; j < n; j++) {
      let d = 0;
      for (let c = 0; c < 3; c++) d = Math.max(d, Math.abs(line4[j * 4 + c]! - trend[j * 4 + c]!));
      if (d > OFF_TREND || line4[j * 4 + 3]! < 128) off[j] = 1;
    }
    filled = bridge(line4, off, n);
  }
  let offCount = 0;
  let detail = 0;
  const smooth = runningMean(filled, n, 31);
  for (let j = 0; j < n; j++) {
    if (off[j]) {
      offCount++;
      continue;
    }
    for (let c = 0; c < 3; c++) detail += Math.abs(line4[j * 4 + c]! - smooth[j * 4 + c]!) / 3;
  }
  const kept = n - offCount;
  const extendable =
    offCount <= MAX_SUBJECT_SHARE * n && kept > 0 && detail / kept <= MAX_BACKDROP_DETAIL;
  return { line: runningMean(filled, n, 61), edge: filled, raw: line4, extendable };
}

/** The line with its `off` positions interpolated from the nearest kept ones on either side. */
function bridge(values: Float32Array, off: Uint8Array, n: number): Float32Array {
  const out = Float32Array.from(values);
  let last = -1;
  for (let j = 0; j <= n; j++) {
    if (j < n && off[j]) continue;
    for (let k = last + 1; k < j; k++)
      for (let c = 0; c < 4; c++) {
        const a = last >= 0 ? values[last * 4 + c]! : undefined;
        const b = j < n ? values[j * 4 + c]! : undefined;
        out[k * 4 + c] =
          a !== undefined && b !== undefined
            ? a + ((b - a) * (k - last)) / (j - last)
            : (a ?? b ?? values[k * 4 + c]!);
      }
    last = j;
  }
  return out;
}

function runningMedian(values: Float32Array, n: number, window: number): Float32Array {
  const out = new Float32Array(n * 4);
  const r = window >> 1;
  // Sampled median (every few pixels) keeps this linear enough for 2600-px edges.
  const step = Math.max(1, Math.floor(window / 32));
  for (let c = 0; c < 4; c++)
    for (let j = 0; j < n; j++) {
      const sample: number[] = [];
      for (let k = Math.max(0, j - r); k <= Math.min(n - 1, j + r); k += step)
        sample.push(values[k * 4 + c]!);
      sample.sort((a, b) => a - b);
      out[j * 4 + c] = sample[sample.length >> 1]!;
    }
  return out;
}

function runningMean(values: Float32Array, n: number, window: number): Float32Array {
  const out = new Float32Array(n * 4);
  const r = window >> 1;
  for (let c = 0; c < 4; c++) {
    const prefix = new Float64Array(n + 1);
    for (let j = 0; j < n; j++) prefix[j + 1] = prefix[j]! + values[j * 4 + c]!;
    for (let j = 0; j < n; j++) {
      const a = Math.max(0, j - r);
      const b = Math.min(n, j + r + 1);
      out[j * 4 + c] = (prefix[b]! - prefix[a]!) / (b - a);
    }
  }
  return out;
}
