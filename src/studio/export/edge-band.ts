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
