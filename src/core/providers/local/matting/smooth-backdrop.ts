/**
 * A digital backdrop under a smooth fall-off of light (a lens vignette, a gradient laid over a
 * pasted cut-out): no noise, no single flat colour, but every frame pixel is the rounding of one
 * smooth surface. Modelled per channel in linear light as a quadratic (a lens vignette is a gain
 * falling with the square of the distance from the centre) plus radial 4th and 6th powers (see
 * terms), fitted on the frame and extrapolated inward, then refitted on the background found.
 * Where the frame holds to it within rounding, the backdrop is known to a fraction of a level
 * everywhere, as a flat digital colour is: white fabric a level off it is told
 * apart, where the grid surface (medians of cells) lags the gradient by a level or two and the
 * flood, held to 2.5 levels, ran through 246 white fabric on 246 grey (12562_00 under a 30%
 * vignette: IoU 0.668).
 */

/** Levels a backdrop pixel lies off the fitted surface at most: its rounding and the fit's error. */
export const SMOOTH_EXACT = 0.6;
/** Share of the frame seeds the surface must match (the rest: fabric touching the frame). */
const SMOOTH_SHARE = 0.97;
/** Share of the frame seeds that may miss the surface away from the subject (flatColour's). */
const AWAY_SHARE = 0.003;
/** Levels the frame must fall off by somewhere: a flat frame is flatColour's. */
const LEAST_FALL = 1;

import { solve } from './least-squares';

const LINEAR = Float64Array.from({ length: 256 }, (_, i) => {
  const v = i / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
});
const toLevels = (v: number) => {
  const c = Math.max(0, Math.min(1, v));
  return 255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055);
};

const TERMS = 8;
/**
 * The surface's terms at (x, y): a quadratic (coordinates centred and scaled to [-1, 1]) and the
 * 4th and 6th powers of the distance from the centre (over the half diagonal), for a lens's
 * fall-off (cos^4) or a vignette laid on gamma-encoded levels, which a quadratic in linear light
 * does not follow: the frame tells those powers apart, the radial symmetry carries them inward.
 */
function terms(x: number, y: number, w: number, h: number, out: Float64Array): void {
  const u = (2 * x + 1) / w - 1;
  const v = (2 * y + 1) / h - 1;
  const r2 = (u * u * w * w + v * v * h * h) / (w * w + h * h);
  out[0] = 1;
  out[1] = u;
  out[2] = v;
  out[3] = u * u;
  out[4] = v * v;
  out[5] = u * v;
  out[6] = r2 * r2;
  out[7] = r2 * r2 * r2;
}

/** Least-squares coefficients per channel (linear light) over `pixels`, or null when singular. */
function fit(rgb: Uint8Array, w: number, h: number, pixels: number[]): Float64Array[] | null {
  const ata = new Float64Array(TERMS * TERMS);
  const atb = [0, 1, 2].map(() => new Float64Array(TERMS));
  const t = new Float64Array(TERMS);
  for (const i of pixels) {
    const x = i % w;
    terms(x, (i - x) / w, w, h, t);
    for (let a = 0; a < TERMS; a++) {
      for (let b = 0; b < TERMS; b++) ata[a * TERMS + b]! += t[a]! * t[b]!;
      for (let c = 0; c < 3; c++) atb[c]![a]! += t[a]! * LINEAR[rgb[i * 3 + c]!]!;
    }
  }
  const coeffs = atb.map((rhs) => solve(Float64Array.from(ata), rhs));
  return coeffs.every((k) => k !== null) ? (coeffs as Float64Array[]) : null;
}

/** The surface in levels at pixel i. */
function levelsAt(coeffs: Float64Array[], i: number, w: number, h: number, t: Float64Array) {
  const x = i % w;
  terms(x, (i - x) / w, w, h, t);
  return coeffs.map((k) => {
    let s = 0;
    for (let a = 0; a < TERMS; a++) s += k[a]! * t[a]!;
    return toLevels(s);
  });
}

/** Whether pixel i lies within `levels` of the surface in every channel. */
function within(rgb: Uint8Array, i: number, m: number[], levels: number): boolean {
  return m.every((v, c) => Math.abs(rgb[i * 3 + c]! - v) <= levels);
}

/** The surface (levels, RGB per pixel) at every pixel of a `w` x `h` image. */
export function renderSmooth(coeffs: Float64Array[], w: number, h: number): Float32Array {
  const out = new Float32Array(w * h * 3);
  const t = new Float64Array(TERMS);
  for (let i = 0; i < w * h; i++) {
    const m = levelsAt(coeffs, i, w, h, t);
    out[i * 3] = m[0]!;
    out[i * 3 + 1] = m[1]!;
    out[i * 3 + 2] = m[2]!;
  }
  return out;
}

/**
 * The smooth surface the frame seeds are the rounding of, or null when they are not (noise, light
 * on a real backdrop, a flat frame). Refitted twice on the seeds it explains, so fabric touching the
 * frame does not pull it.
 */
export function smoothBackdrop(
  rgb: Uint8Array,
  w: number,
  h: number,
  seeds: number[],
  /** Whether clear subject lies beside frame seed i, whose backdrop colour is `colour`. */
  beside: (i: number, colour: number[]) => boolean,
): Float64Array[] | null {
  if (seeds.length < 64) return null;
  const t = new Float64Array(TERMS);
  let coeffs = fit(rgb, w, h, seeds);
  for (const levels of [2, SMOOTH_EXACT]) {
    if (!coeffs) return null;
    const c = coeffs;
    const kept = seeds.filter((i) => within(rgb, i, levelsAt(c, i, w, h, t), levels));
    if (kept.length < SMOOTH_SHARE * seeds.length) return null;
    coeffs = fit(rgb, w, h, kept);
  }
  if (!coeffs) return null;
  const c = coeffs;
  let matched = 0;
  let lo = 255;
  let hi = 0;
  for (const i of seeds) {
    const m = levelsAt(c, i, w, h, t);
    if (!within(rgb, i, m, SMOOTH_EXACT)) continue;
    matched++;
    lo = Math.min(lo, m[1]!);
    hi = Math.max(hi, m[1]!);
  }
  if (matched < SMOOTH_SHARE * seeds.length || hi - lo < LEAST_FALL) return null;
  // The seeds it leaves must be fabric touching the frame: a shadow or light reaching the frame
  // of a real backdrop shades a stretch of it away from the subject.
  let away = 0;
  for (const i of seeds) {
    const m = levelsAt(c, i, w, h, t);
    if (!within(rgb, i, m, SMOOTH_EXACT) && !beside(i, m)) away++;
  }
  return away <= AWAY_SHARE * seeds.length ? coeffs : null;
}

/** The seeds the surface explains. */
export function smoothSeeds(
  rgb: Uint8Array,
  w: number,
  h: number,
  seeds: number[],
  surface: Float32Array,
): number[] {
  return seeds.filter((i) =>
    [0, 1, 2].every((c) => Math.abs(rgb[i * 3 + c]! - surface[i * 3 + c]!) <= SMOOTH_EXACT),
  );
}

/** The surface refitted on the background found (many more pixels than the frame), or null. */
export function refitSmooth(
  rgb: Uint8Array,
  w: number,
  h: number,
  background: Uint8Array,
): Float64Array[] | null {
  const pixels: number[] = [];
  // Every 3rd pixel each way: the surface is smooth, so a ninth of them fit it as well.
  for (let y = 0; y < h; y += 3)
    for (let x = 0; x < w; x += 3) if (background[y * w + x]) pixels.push(y * w + x);
  return pixels.length >= 64 ? fit(rgb, w, h, pixels) : null;
}
