/**
 * Wall enclosed by the figure (between arm and body, between the legs) in other light than the
 * open wall: the surface fit lays the open wall's level there, and the figure's shade darkens
 * it, so the pockets' near-exact match misses it and no flood from the background reaches it.
 * A region that looks like the wall (lit-wall.ts's model: the wall's chroma at some gain, smooth,
 * with its fine texture) is wall when it is ringed by what is clearly not wall (skin, a sleeve,
 * trousers) or by the background. Inside white fabric a shaded patch is ringed by more fabric of
 * the wall's chroma and stays.
 */
import { WALL_GAIN_MAX, WALL_GAIN_MIN } from './lit-wall';
import { components, neighbours4 } from './morphology';

/** The rim of wall in other light around a region reaches at most this share of the long side. */
const RIM_SHARE = 1 / 40;
/** Rim still going at that distance, at most this share of the clear pixels met: enclosed. */
const ESCAPE_SHARE = 0.1;
/** Bounded by the background on at most this share of its outline: a white shirt is all outline. */
const OPEN_SHARE = 0.5;
/** Wall in the figure's shade: on average at most this gain of the open wall. */
const SHADE_GAIN = 1;
/** Regions smaller than this share of the frame are left to the pockets and ringing gaps. */
const MIN_AREA = 0.0005;

/** Levels off the shaded backdrop, in units of the wall model's own slack, that are clearly not wall. */
const CLEAR_DEVIATION = 3;

/**
 * Pixels clearly not wall: too dark or bright for any light on it, or off its chroma by far more
 * than the wall model allows (skin, a coloured sleeve). Wall in yet other light (a gap's rim,
 * lit from the side) and white fabric are not clear.
 */
function clearlyNotWall(rgb: Uint8Array, surface: Float32Array, n: number, t: number): Uint8Array {
  const clear = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * 3;
    const by = 0.299 * surface[o]! + 0.587 * surface[o + 1]! + 0.114 * surface[o + 2]!;
    const iy = 0.299 * rgb[o]! + 0.587 * rgb[o + 1]! + 0.114 * rgb[o + 2]!;
    const s = (iy + 1) / (by + 1);
    let dev = 0;
    for (let c = 0; c < 3; c++) dev = Math.max(dev, Math.abs(rgb[o + c]! - s * surface[o + c]!));
    const slack = t + 2 + 10 * Math.abs(1 - s);
    clear[i] = s < WALL_GAIN_MIN || s > WALL_GAIN_MAX || dev > CLEAR_DEVIATION * slack ? 1 : 0;
  }
  return clear;
}

/**
 * Opens enclosed regions of wall (`wall` from wallModel: 1 smooth wall); `surface` and `t` as
 * for that model. Returns the pixels opened.
 */
export function addWallGaps(
  background: Uint8Array,
  wall: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  w: number,
  h: number,
  t: number,
): Uint8Array {
  const n = w * h;
  const notWall = clearlyNotWall(rgb, surface, n, t);
  const candidate = new Uint8Array(n);
  for (let i = 0; i < n; i++) candidate[i] = wall[i] === 1 && !background[i] ? 1 : 0;
  const { label, sizes } = components(candidate, w);
  const owner = new Int32Array(n).fill(-1);
  let frontier: number[] = [];
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l >= 0 && sizes[l]! >= MIN_AREA * n) ((owner[i] = l), frontier.push(i));
  }
  const opened = new Uint8Array(n);
  if (!frontier.length) return opened;
  // Wall in the figure's shade is darker than the open wall on the whole; white fabric lit like
  // the wall (a white shirt on light grey) is as bright or brighter.
  const gain = new Float64Array(sizes.length);
  for (const i of frontier) {
    const o = i * 3;
    const by = 0.299 * surface[o]! + 0.587 * surface[o + 1]! + 0.114 * surface[o + 2]!;
    const iy = 0.299 * rgb[o]! + 0.587 * rgb[o + 1]! + 0.114 * rgb[o + 2]!;
    gain[owner[i]!]! += (iy + 1) / (by + 1) / sizes[owner[i]!]!;
  }
  // Out through the rim (wall in yet other light) to what bounds it: clear subject, or nothing
  // within RIM pixels (white fabric goes on and on).
  const rim = Math.max(4, Math.round(Math.max(w, h) * RIM_SHARE));
  const hits = new Float64Array(sizes.length);
  const escaped = new Float64Array(sizes.length);
  const open = new Float64Array(sizes.length);
  const nb = new Int32Array(4);
  for (let step = 1; step <= rim && frontier.length; step++) {
    const next: number[] = [];
    for (const i of frontier) {
      neighbours4(i, w, n, nb);
      for (let k = 0; k < 4; k++) {
        const j = nb[k]!;
        if (j < 0 || owner[j] !== -1) continue;
        const l = owner[i]!;
        if (background[j]) {
          open[l]!++;
          continue;
        }
        if (notWall[j]) {
          hits[l]!++;
          continue;
        }
        owner[j] = l;
        next.push(j);
      }
    }
    frontier = next;
  }
  for (const i of frontier) escaped[owner[i]!]!++;
  for (let i = 0; i < n; i++) {
    const l = owner[i]!;
    if (
      l >= 0 &&
      gain[l]! <= SHADE_GAIN &&
      hits[l]! > 0 &&
      escaped[l]! <= ESCAPE_SHARE * hits[l]! &&
      open[l]! <= OPEN_SHARE * (hits[l]! + open[l]!)
    ) {
      opened[i] = 1;
      background[i] = 1;
    }
  }
  return opened;
}
