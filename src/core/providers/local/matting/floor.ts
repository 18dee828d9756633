/**
 * A floor below the wall (a room's floor, with a cove or skirting between the two): a second
 * surface the wall's fit cannot follow (another colour, its own texture, steep shading where it
 * bends), meeting the wall along a straight, nearly level line across the frame. Below that line
 * it is whatever the frame's lower part reaches without crossing an edge: the surface shades
 * gradually, while the figure standing on it (legs, shoes) ends at sharp outlines.
 */
import { channelMeans, gradualFlood, meanStep } from './gradual-flood';
import { components } from './morphology';

/** The meeting line: fitted points this close (px), this level (|dy/dx|), this wide (share of w). */
const LINE_SLACK = 3;
const LINE_SLOPE = 0.15;
const LINE_SPAN = 0.3;
/** A floor shows along this share of the bottom edge. */
const BOTTOM_SHARE = 0.25;
/** Step between neighbours (levels, 3x3 means) the floor's shading stays under: its texture's, scaled. */
const STEP_GAIN = 2;
const STEP_MIN = 3;
const STEP_MAX = 10;

type Line = { a: number; b: number };

/**
 * Where the wall ends above a floor: the lowest background pixel of each column that has
 * something else below it, fitted with a line (trimmed least squares). Null when those points do
 * not lie along a straight, nearly level line in the lower half across a good part of the width.
 */
function wallFloorLine(background: Uint8Array, w: number, h: number): Line | null {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let x = 0; x < w; x++) {
    for (let y = h - 1; y >= 0; y--) {
      if (!background[y * w + x]) continue;
      if (y < h - 1) (xs.push(x), ys.push(y));
      break;
    }
  }
  if (xs.length < LINE_SPAN * w) return null;
  let keep = xs.map((_, k) => k);
  let a = 0;
  let b = 0;
  for (let round = 0; round < 5 && keep.length >= 2; round++) {
    const mx = keep.reduce((s, k) => s + xs[k]!, 0) / keep.length;
    const my = keep.reduce((s, k) => s + ys[k]!, 0) / keep.length;
    let sxy = 0;
    let sxx = 0;
    for (const k of keep) {
      sxy += (xs[k]! - mx) * (ys[k]! - my);
      sxx += (xs[k]! - mx) ** 2;
    }
    b = sxx ? sxy / sxx : 0;
    a = my - b * mx;
    const residual = keep.map((k) => Math.abs(ys[k]! - (a + b * xs[k]!))).sort((p, q) => p - q);
    const cut = Math.max(LINE_SLACK, residual[Math.floor(0.6 * (residual.length - 1))]!);
    keep = keep.filter((k) => Math.abs(ys[k]! - (a + b * xs[k]!)) <= cut);
  }
  const inliers = xs.filter((x, k) => Math.abs(ys[k]! - (a + b * x)) <= LINE_SLACK).length;
  const level = Math.abs(b) <= LINE_SLOPE;
  const low = a + (b * w) / 2 > h / 2;
  return level && low && inliers >= LINE_SPAN * w ? { a, b } : null;
}

/** Chromaticity this far outside the floor's range at the frame is not floor. */
const CHROMA_SLACK = 0.01;
/** Luminance under this share of the floor's darkest (2nd percentile) at the frame is not floor. */
const DARK_SHARE = 0.7;

/** Whether a pixel has the colours the floor shows at the frame (`seeds`). */
function floorColours(rgb: Uint8Array, seeds: number[]): (i: number) => boolean {
  const cr: number[] = [];
  const cg: number[] = [];
  const ls: number[] = [];
  for (const i of seeds) {
    const [r, g, b] = [rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!];
    const s = r + g + b + 1;
    cr.push(r / s);
    cg.push(g / s);
    ls.push(0.299 * r + 0.587 * g + 0.114 * b);
  }
  const q = (v: number[], p: number) => v.sort((a, b) => a - b)[Math.floor(p * (v.length - 1))]!;
  const [r0, r1] = [q(cr, 0.02) - CHROMA_SLACK, q(cr, 0.98) + CHROMA_SLACK];
  const [g0, g1] = [q(cg, 0.02) - CHROMA_SLACK, q(cg, 0.98) + CHROMA_SLACK];
  const dark = DARK_SHARE * q(ls, 0.02);
  return (i) => {
    const [r, g, b] = [rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!];
    const s = r + g + b + 1;
    return (
      r / s >= r0 &&
      r / s <= r1 &&
      g / s >= g0 &&
      g / s <= g1 &&
      0.299 * r + 0.587 * g + 0.114 * b >= dark
    );
  };
}

/** Adds the floor below the wall to `background`; returns the pixels added. */
export function addFloor(
  background: Uint8Array,
  rgb: Uint8Array,
  w: number,
  h: number,
): Uint8Array {
  const n = w * h;
  const added = new Uint8Array(n);
  const line = wallFloorLine(background, w, h);
  if (!line) return added;
  const below = (i: number) => Math.floor(i / w) > line.a + line.b * (i % w);
  let bottom = 0;
  for (let x = 0; x < w; x++) bottom += background[(h - 1) * w + x] ? 0 : 1;
  if (bottom < BOTTOM_SHARE * w) return added;
  // Seeds: the frame below the line (the floor reaches the frame on three sides).
  const seeds: number[] = [];
  for (let y = 0; y < h; y++) {
    for (const x of y === h - 1 ? Array.from({ length: w }, (_, k) => k) : [0, w - 1]) {
      const i = y * w + x;
      if (!background[i] && below(i)) seeds.push(i);
    }
  }
  if (!seeds.length) return added;
  const means = channelMeans(rgb, w, h);
  // The floor's own texture: steps between neighbouring seeds along the frame.
  const steps: number[] = [];
  for (let k = 1; k < seeds.length; k++) {
    const i = seeds[k - 1]!;
    const j = seeds[k]!;
    if (Math.abs(i - j) === 1 || Math.abs(i - j) === w) steps.push(meanStep(means, i, j));
  }
  steps.sort((p, q) => p - q);
  const texture = steps.length ? steps[Math.floor(0.95 * (steps.length - 1))]! : STEP_MIN;
  const limit = Math.max(STEP_MIN, Math.min(STEP_MAX, STEP_GAIN * texture));
  // The floor's colours: the seeds' chromaticity and luminance ranges. A glossy floor mirrors
  // the figure, and the reflection shades gradually into the shoes and legs; their colour
  // (skin, a black shoe) lies outside what the floor shows at the frame.
  const inColours = floorColours(rgb, seeds);
  gradualFlood(added, seeds, means, w, limit, (j) => !background[j] && below(j) && inColours(j));
  for (let i = 0; i < n; i++) if (added[i]) background[i] = 1;
  bridgeSeams(background, added, below, w, h);
  return added;
}

/**
 * A seam between two parts of the floor (the dark line under a cove) is this thin (share of h):
 * a paper roll's curled foot shades 1.6-2% of the height (052767_0); a shoe's toe or a strap lying
 * across is ruled out by the length below...
 */
const SEAM_HEIGHT = 0.025;
/** ...and runs this far across (share of w); a shoe's thin toe does not. */
const SEAM_LENGTH = 0.1;

/**
 * The thin dark lines where the floor's parts meet (a cove's foot, a skirting's edge) are too
 * dark for the floor's colours: below the wall line, runs of at most SEAM_HEIGHT of the height
 * with background above and below, joined into strips that run SEAM_LENGTH across.
 */
function bridgeSeams(
  background: Uint8Array,
  added: Uint8Array,
  below: (i: number) => boolean,
  w: number,
  h: number,
): void {
  const n = w * h;
  const gap = Math.max(2, Math.round(SEAM_HEIGHT * h));
  const seam = new Uint8Array(n);
  for (let x = 0; x < w; x++) {
    let last = -1;
    for (let y = 0; y < h; y++) {
      if (!background[y * w + x]) continue;
      if (last >= 0 && y - last > 1 && y - last - 1 <= gap && below(last * w + w + x))
        for (let k = last + 1; k < y; k++) seam[k * w + x] = 1;
      last = y;
    }
  }
  const { label, sizes } = components(seam, w);
  const left = new Int32Array(sizes.length).fill(w);
  const right = new Int32Array(sizes.length).fill(-1);
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l < 0) continue;
    left[l] = Math.min(left[l]!, i % w);
    right[l] = Math.max(right[l]!, i % w);
  }
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l >= 0 && right[l]! - left[l]! + 1 >= SEAM_LENGTH * w) background[i] = added[i] = 1;
  }
}
