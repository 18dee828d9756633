/**
 * Contact shadows: the dark strip where a figure stands on the ground (under and around the
 * feet). It is the backdrop darkened with the backdrop's chroma, like the cast shadows the
 * smooth-wall flood takes, but its penumbra shades steeply and the ground under it has grain,
 * so it fails that flood's smoothness test. Here the flood steps across gradual shading only
 * (gradual-flood.ts) and stops at the shoes' sharp outline; a white shoe in shade has the same
 * chroma and darkness, but not a gradual way in.
 */
import { channelMeans, gradualFlood } from './gradual-flood';
import {
  components,
  dilate,
  distanceToUnset,
  erode,
  growRegions,
  touchingBackground,
} from './morphology';
import { shadeOf } from './shade';

/** Gains of the backdrop a contact shadow spans. */
const GAIN_MIN = 0.45;
const GAIN_MAX = 0.99;
/** Levels off the shaded backdrop a shadow keeps: the noise, plus this, plus this per unit of darkening. */
const CHROMA_SLACK = 4;
const CHROMA_PER_DARKENING = 30;
/** Step (levels, between neighbouring 3x3 means) a penumbra stays under. */
const STEP = 3;

/** A contact shadow's middle lies within this share of the figure's height above its lowest row. */
const FEET_SHARE = 0.15;
/** Thicker than this share of the long side is no strip at the feet... */
const THICK_SHARE = 1 / 20;
/** ...and a shadow pools: somewhere this share of the long side from its edge (10 px of 1024). */
const POOL_SHARE = 1 / 100;

/**
 * A shadow too thin to pool is still taken as a patch beside clear subject (the wings of a hem's
 * shadow): this share of the subject 2-5 px beyond it is of another colour than the backdrop...
 */
const CLEAR_SHARE = 0.6;
/** Levels off the backdrop's shade that make a pixel another colour (red-tee's pink rim: 26). */
const CLEAR_CHROMA = 20;
/**
 * ...and its area is at most this many squares of its depth (half-width): a patch about as long
 * as wide (red-tee's wings: 5.8 and 6.3), not a rim along an outline (051988_1's cream trouser
 * legs beside their shadow: 35 and 123, which cost IoU 0.996 -> 0.986).
 */
const PATCH_AREA = 12;

/** Whether pixel `i` matches the surface to within `t` levels in every channel. */
function matchesSurface(rgb: Uint8Array, surface: Float32Array, i: number, t: number): boolean {
  for (let c = 0; c < 3; c++) if (Math.abs(rgb[i * 3 + c]! - surface[i * 3 + c]!) > t) return false;
  return true;
}

/** Levels a shade of the backdrop deviates by at most at gain `s`. */
const shadeSlack = (t: number, s: number) =>
  t + CHROMA_SLACK + CHROMA_PER_DARKENING * Math.abs(1 - s);

/**
 * Per labelled region, 1 when the subject 2-5 px beyond it (the background left out) is mostly of
 * another chroma than the backdrop at the pixel's gain: the region lies between the backdrop and, say, a
 * red hem, as a shadow's wing does; a shaded rim of pale fabric lies along more of that fabric.
 */
export function clearBeside(
  label: Int32Array,
  count: number,
  background: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  w: number,
  t: number,
): Uint8Array {
  const total = new Float64Array(count);
  const clear = new Float64Array(count);
  growRegions(
    Int32Array.from(label),
    w,
    5,
    (j) => background[j] !== 0,
    (j, l, step) => {
      if (step < 2) return;
      total[l]!++;
      // Another colour, not another light or a tint: 048554_1's bluish white tee, 10 levels off
      // its warm grey backdrop, counted and lost a patch of its hem (0.991 -> 0.989).
      const { s, dev } = shadeOf(rgb, surface, j);
      if (dev > Math.max(shadeSlack(t, s), CLEAR_CHROMA)) clear[l]!++;
    },
  );
  return Uint8Array.from(total, (v, l) => (v > 0 && clear[l]! >= CLEAR_SHARE * v ? 1 : 0));
}

/** The figure's lowest row, and how far above it the feet's band reaches (rows in pixels). */
function feetBand(background: Uint8Array, w: number, h: number): { lowest: number; reach: number } {
  let top = -1;
  let lowest = -1;
  for (let y = 0; y < h; y++) {
    let count = 0;
    for (let x = 0; x < w; x++) count += background[y * w + x] ? 0 : 1;
    if (count < 0.01 * w) continue;
    if (top < 0) top = y;
    lowest = y;
  }
  return { lowest, reach: FEET_SHARE * Math.max(0, lowest - top) };
}

/** Adds contact shadows next to the background to it; returns the pixels added. */
export function addContactShadows(
  background: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  w: number,
  h: number,
  t: number,
): Uint8Array {
  const n = w * h;
  const { lowest, reach } = feetBand(background, w, h);
  // A figure the bottom edge cuts stands on no ground the photo shows.
  if (lowest < 0 || lowest >= h - 2) return new Uint8Array(n);
  const shadow = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (background[i]) continue;
    const { s, dev } = shadeOf(rgb, surface, i);
    // Where the surface, refitted on the shadow taken so far, follows the shadow, the rest of it
    // (its wings beside a hem) matches the surface rather than lying under it.
    const shade = s >= GAIN_MIN && s <= GAIN_MAX && dev <= shadeSlack(t, s);
    if (shade || matchesSurface(rgb, surface, i, t)) shadow[i] = 1;
  }
  const seeds = touchingBackground((i) => shadow[i] === 1, background, w);
  const added = new Uint8Array(n);
  gradualFlood(added, seeds, channelMeans(rgb, w, h), w, STEP, (j) => shadow[j] === 1);
  // Contact shadows lie where the figure meets the ground: a region that ends higher up is
  // shaded fabric of the backdrop's colour (a white tee's shaded side) the flood got into, and is
  // given back whole; so is one too thick to be a strip at the feet, or too thin to be a pool.
  const r = Math.max(6, Math.round(Math.max(w, h) * THICK_SHARE));
  const closed = erode(dilate(added, w, h, 3), w, h, 3);
  const depth = distanceToUnset(closed, w, h);
  const { label, sizes } = components(closed, w);
  const deepest = new Float32Array(sizes.length);
  const rows = new Float64Array(sizes.length);
  const bottom = new Int32Array(sizes.length);
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l < 0) continue;
    deepest[l] = Math.max(deepest[l]!, depth[i]!);
    rows[l]! += Math.floor(i / w);
    bottom[l] = Math.max(bottom[l]!, Math.floor(i / w));
  }
  // It reaches down to the feet, its middle lies low (a shadow may climb the legs a little), and
  // it pools somewhere: the shaded rim of pale fabric along an outline is a thin strip. A thin
  // patch beside subject of another colour is shadow too (a wing beside a hem's corner).
  const pool = Math.max(3, Math.max(w, h) * POOL_SHARE);
  const besideClear = clearBeside(label, sizes.length, background, rgb, surface, w, t);
  const patch = (l: number) => besideClear[l] === 1 && sizes[l]! <= PATCH_AREA * deepest[l]! ** 2;
  const keep = (l: number) =>
    deepest[l]! <= r &&
    (deepest[l]! >= pool || patch(l)) &&
    bottom[l]! >= lowest - reach &&
    rows[l]! / sizes[l]! >= lowest - 2 * reach;
  for (let i = 0; i < n; i++) {
    if (!added[i]) continue;
    if (label[i]! >= 0 && keep(label[i]!)) background[i] = 1;
    else added[i] = 0;
  }
  return added;
}
