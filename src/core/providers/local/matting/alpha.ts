/**
 * The soft edge: along the outline each pixel is unmixed between the backdrop surface and the
 * subject's own colour nearby (the mean of clearly-inside pixels around it), so the edge sits where
 * a pixel is half subject, not where it first differs from the backdrop. Where the subject's
 * colour is too close to the backdrop to unmix (white on white), the segmentation's edge stands.
 * Beside a cast shadow the backdrop behind the edge is darker still, so there the subject's share
 * is read from the pixel's chroma, the shadow taking the rest of its darkness.
 */
import { distanceToUnset } from './morphology';
import type { Segmentation } from './segment';

const invert = (mask: Uint8Array): Uint8Array => Uint8Array.from(mask, (v) => (v ? 0 : 1));

/** Below this contrast (levels) the unmixing ratio is mostly noise. */
const MIN_CONTRAST = 14;
/** A fringe pixel unmixes as less than half subject. */
const PEEL_BELOW = 0.5;
/** Below this share of subject an edge pixel's unmixing is within the backdrop's ringing. */
const RINGING_SHARE = 0.3;
/** Background pixels at least this far from the subject count as clear backdrop for unmixing. */
const BACK_DEPTH = 2;
/** The backdrop counts as shadowed where it is darker than this share of the fitted surface. */
const SHADED = 0.97;
/** The shade is read on background pixels at least this far out (past the edge's own blur)... */
const SHADE_DEPTH = 3;
/** ...within this many pixels of the edge pixel. */
const SHADE_REACH = 6;
/** Levels of the subject's colour off the backdrop's direction (its chroma against the backdrop)
 * below which the shadow term cannot be told from the subject term (noise of 2 levels = 0.13). */
const SHADOW_CHROMA = 15;
/** Darkest shade a shadow may add at the edge, relative to the backdrop beside it. */
const MIN_SHADE = 0.3;

/**
 * Unmixing of one pixel against the backdrop and the mean colour of the subject pixels around it
 * (those `inside` >= `depth`, in a 9x9 box, or 19x19 where the small box has none): the share of
 * subject colour in the pixel, or NaN where the two colours are too close to tell apart.
 */
function unmixer(
  rgb: Uint8Array,
  w: number,
  h: number,
  surface: Float32Array,
  inside: Float32Array,
  depth: number,
  outside: Float32Array | null,
): (i: number) => number {
  const sum = new Float64Array(3);
  const back = new Float64Array(3);
  let lastGain = 1;
  // The backdrop as seen next to the pixel (a cast shadow darkens it): the surface, shaded to
  // the clear background pixels (`outside` >= BACK_DEPTH) in a 9x9 box; the bare surface when
  // `outside` is null.
  const localBack = (i: number, x0: number, y0: number): void => {
    let count = 0;
    back[0] = back[1] = back[2] = 0;
    if (!outside) {
      for (let c = 0; c < 3; c++) back[c] = surface[i * 3 + c]!;
      return;
    }
    const r = 4;
    for (let y = Math.max(0, y0 - r), yb = Math.min(h - 1, y0 + r); y <= yb; y++) {
      for (
        let j = y * w + Math.max(0, x0 - r), end = y * w + Math.min(w - 1, x0 + r);
        j <= end;
        j++
      ) {
        if (outside[j]! < BACK_DEPTH) continue;
        count++;
        back[0]! += rgb[j * 3]!;
        back[1]! += rgb[j * 3 + 1]!;
        back[2]! += rgb[j * 3 + 2]!;
      }
    }
    // Only the shade is taken from the neighbourhood (a neutral gain on the surface): stray
    // threads or specks left in the background must not tint it.
    let gain = 1;
    if (count) {
      const seen = back[0]! + back[1]! + back[2]!;
      const model = (surface[i * 3]! + surface[i * 3 + 1]! + surface[i * 3 + 2]!) * count;
      gain = Math.max(0.45, Math.min(1, seen / Math.max(1, model)));
    }
    for (let c = 0; c < 3; c++) back[c] = gain * surface[i * 3 + c]!;
    lastGain = gain;
  };
  // Whether the background a few pixels out is shadowed (`outside` is set where this is asked).
  const shadowed = (x0: number, y0: number): boolean => {
    let seen = 0;
    let model = 0;
    const r = SHADE_REACH;
    for (let y = Math.max(0, y0 - r), yb = Math.min(h - 1, y0 + r); y <= yb; y++) {
      for (
        let j = y * w + Math.max(0, x0 - r), end = y * w + Math.min(w - 1, x0 + r);
        j <= end;
        j++
      ) {
        if (outside![j]! < SHADE_DEPTH) continue;
        seen += rgb[j * 3]! + rgb[j * 3 + 1]! + rgb[j * 3 + 2]!;
        model += surface[j * 3]! + surface[j * 3 + 1]! + surface[j * 3 + 2]!;
      }
    }
    return model > 0 && seen < SHADED * model;
  };
  const boxMean = (x0: number, y0: number, r: number): number => {
    let count = 0;
    sum[0] = sum[1] = sum[2] = 0;
    const ya = Math.max(0, y0 - r);
    const yb = Math.min(h - 1, y0 + r);
    const xa = Math.max(0, x0 - r);
    const xb = Math.min(w - 1, x0 + r);
    for (let y = ya; y <= yb; y++) {
      for (let j = y * w + xa, end = y * w + xb; j <= end; j++) {
        if (inside[j]! < depth) continue;
        count++;
        sum[0]! += rgb[j * 3]!;
        sum[1]! += rgb[j * 3 + 1]!;
        sum[2]! += rgb[j * 3 + 2]!;
      }
    }
    return count;
  };
  return (i) => {
    const x = i % w;
    const y = (i - x) / w;
    let count = boxMean(x, y, 4);
    if (!count) count = boxMean(x, y, 9);
    if (!count) return NaN;
    localBack(i, x, y);
    let dot = 0;
    let norm = 0;
    for (let c = 0; c < 3; c++) {
      const b = back[c]!;
      const f = sum[c]! / count - b;
      dot += (rgb[i * 3 + c]! - b) * f;
      norm += f * f;
    }
    if (Math.sqrt(norm) < MIN_CONTRAST) return NaN;
    const plain = dot / norm;
    if (!outside || plain < RINGING_SHARE || lastGain > SHADED || !shadowed(x, y)) return plain;
    // In a cast shadow the edge pixel mixes the subject with a darker backdrop than the one seen
    // beside it (shadows deepen towards the subject): p = a F + u B, a shadow only scaling B (it
    // keeps the backdrop's chroma), so the subject's share is what explains the pixel's chroma.
    let ff = 0;
    let fb = 0;
    let bb = 0;
    let pf = 0;
    let pb = 0;
    for (let c = 0; c < 3; c++) {
      const f = sum[c]! / count;
      const b = back[c]!;
      const p = rgb[i * 3 + c]!;
      ff += f * f;
      fb += f * b;
      bb += b * b;
      pf += p * f;
      pb += p * b;
    }
    if (Math.sqrt(Math.max(0, ff - (fb * fb) / bb)) < SHADOW_CHROMA) return plain;
    const det = ff * bb - fb * fb;
    const a = (pf * bb - fb * pb) / det;
    const shade = (ff * pb - fb * pf) / det / Math.max(1e-3, 1 - a);
    return shade >= MIN_SHADE && shade <= 1 && a < plain ? a : plain;
  };
}

/**
 * The outline's fringe: pixels that unmix as mostly backdrop (JPEG ringing, the bright rim an
 * earlier cut-out left, a pale halo, the outer half of the mixed edge, so the outline sits where
 * a pixel is half subject) are peeled off from the background side, a few pixels deep at most,
 * so fabric of another colour further in is never reached. Changes `fg` in place.
 */
export function peelFringe(
  rgb: Uint8Array,
  w: number,
  h: number,
  seg: Segmentation,
  steps: number,
): void {
  const n = w * h;
  const { fg, surface } = seg;
  const depth = steps + 2;
  const inside = distanceToUnset(fg, w, h);
  const unmix = unmixer(rgb, w, h, surface, inside, depth, distanceToUnset(invert(fg), w, h));
  // A stripe of white fabric reaching the outline has white further in; a fringe has not. So a
  // pixel is peeled only when the backdrop is nearer its colour than any subject pixel nearby.
  const closerToBackdrop = (i: number): boolean => {
    const x0 = i % w;
    const y0 = (i - x0) / w;
    const r = 4;
    let nearest = Infinity;
    const [pr, pg, pb] = [rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!];
    for (let y = Math.max(0, y0 - r); y <= Math.min(h - 1, y0 + r); y++) {
      for (
        let j = y * w + Math.max(0, x0 - r), end = y * w + Math.min(w - 1, x0 + r);
        j <= end;
        j++
      ) {
        if (inside[j]! < depth) continue;
        const d =
          (rgb[j * 3]! - pr) ** 2 + (rgb[j * 3 + 1]! - pg) ** 2 + (rgb[j * 3 + 2]! - pb) ** 2;
        if (d < nearest) nearest = d;
      }
    }
    const back =
      (surface[i * 3]! - pr) ** 2 +
      (surface[i * 3 + 1]! - pg) ** 2 +
      (surface[i * 3 + 2]! - pb) ** 2;
    return back < nearest;
  };
  const isEdge = (i: number) => {
    const x = i % w;
    return (
      (x > 0 && !fg[i - 1]) ||
      (x < w - 1 && !fg[i + 1]) ||
      (i >= w && !fg[i - w]) ||
      (i + w < n && !fg[i + w])
    );
  };
  let frontier: number[] = [];
  for (let i = 0; i < n; i++) if (fg[i] && isEdge(i)) frontier.push(i);
  for (let step = 0; step < steps && frontier.length; step++) {
    const peel = frontier.filter((i) => unmix(i) < PEEL_BELOW && closerToBackdrop(i));
    for (const i of peel) fg[i] = 0;
    const next = new Set<number>();
    for (const i of peel) {
      const x = i % w;
      if (x > 0 && fg[i - 1]) next.add(i - 1);
      if (x < w - 1 && fg[i + 1]) next.add(i + 1);
      if (i >= w && fg[i - w]) next.add(i - w);
      if (i + w < n && fg[i + w]) next.add(i + w);
    }
    frontier = [...next];
  }
}

export function edgeAlpha(rgb: Uint8Array, w: number, h: number, seg: Segmentation): Uint8Array {
  const n = w * h;
  const { fg, surface } = seg;
  const inside = distanceToUnset(fg, w, h);
  const unmix = unmixer(rgb, w, h, surface, inside, 3, distanceToUnset(invert(fg), w, h));
  const alpha = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (!fg[i]) continue;
    if (inside[i]! >= 3) {
      alpha[i] = 255;
      continue;
    }
    let a = unmix(i);
    if (Number.isNaN(a)) {
      alpha[i] = 255;
      continue;
    }
    // Clean the tails: JPEG ringing on the backdrop side, texture on the subject side. At the
    // lowest contrast unmixed (MIN_CONTRAST) a third is about 4 levels, what ringing reaches.
    if (a < RINGING_SHARE) a = 0;
    else if (a > 0.9) a = 1;
    alpha[i] = Math.round(255 * Math.min(1, a));
  }
  return alpha;
}
