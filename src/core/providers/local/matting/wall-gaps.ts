/**
 * Wall enclosed by the figure (between arm and body, between the legs) in other light than the
 * open wall: the surface fit lays the open wall's level there, and the figure's shade darkens
 * it, so the pockets' near-exact match misses it and no flood from the background reaches it.
 * A region that looks like the wall (lit-wall.ts's model: the wall's chroma at some gain, smooth,
 * with its fine texture) is wall when it is ringed by what is clearly not wall (skin, a sleeve,
 * trousers) or by the background, and is no brighter than the open wall: than the fit there, or
 * than the wall beside it on the same rows, whose colour its pixels then keep (the fit can lay a
 * darker level inside the figure than the wall shows around it). Inside white fabric a shaded
 * patch is ringed by more fabric of the wall's chroma and stays. A narrow gap with no smooth
 * wall in it (JPEG ringing all through) is read from its colour and its ring (addRingedWall).
 */
import { WALL_GAIN_MAX, WALL_GAIN_MIN } from './lit-wall';
import { components, dilate, distanceToUnset, erode, neighbours4 } from './morphology';
import { shadeOf } from './shade';

/** The rim of wall in other light around a region reaches at most this share of the long side. */
const RIM_SHARE = 1 / 40;
/** Rim still going at that distance, at most this share of the clear pixels met: enclosed. */
const ESCAPE_SHARE = 0.1;
/** Bounded by the background on at most this share of its outline: a white shirt is all outline. */
const OPEN_SHARE = 0.5;
/** Wall in the figure's shade: on average at most this gain of the open wall. */
const SHADE_GAIN = 1;
/**
 * Or at most this gain of the open wall beside it at the same height: the fit can lay a darker
 * level inside the figure than the wall around it shows (a gap between arm and body 11% over the
 * fit, 1% over the wall beside it); white fabric lit like the wall is brighter than that (11-17%).
 */
const BESIDE_GAIN = 1.06;
/** The open wall beside a region: within this share of the width of its box, on its rows. */
const BESIDE_REACH = 1 / 8;
/** Fewer open wall pixels than this share of the region's there: its whole rows are read. */
const BESIDE_MIN = 0.1;
/** Levels off the wall beside's colour (scaled to the pixel's level) a pixel of it keeps, over the noise. */
const BESIDE_SLACK = 3;
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
    const { s, dev } = shadeOf(rgb, surface, i);
    const slack = t + 2 + 10 * Math.abs(1 - s);
    clear[i] = s < WALL_GAIN_MIN || s > WALL_GAIN_MAX || dev > CLEAR_DEVIATION * slack ? 1 : 0;
  }
  return clear;
}

const luma = (rgb: Uint8Array, i: number) =>
  0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!;

/**
 * The open wall's colour (per channel medians of the background) on rows y0..y1 within x0..x1,
 * or on the whole rows when fewer than `min` pixels show there; null when none do.
 */
function wallBeside(
  background: Uint8Array,
  rgb: Uint8Array,
  w: number,
  box: { x0: number; x1: number; y0: number; y1: number },
  min: number,
): [number, number, number] | null {
  const read = (x0: number, x1: number) => {
    const v: number[][] = [[], [], []];
    for (let y = box.y0; y <= box.y1; y++)
      for (let x = x0; x <= x1; x++)
        if (background[y * w + x])
          for (let c = 0; c < 3; c++) v[c]!.push(rgb[(y * w + x) * 3 + c]!);
    return v;
  };
  let v = read(box.x0, box.x1);
  if (v[0]!.length < min) v = read(0, w - 1);
  if (!v[0]!.length) return null;
  const median = (a: number[]) => a.sort((p, q) => p - q)[a.length >> 1]!;
  return [median(v[0]!), median(v[1]!), median(v[2]!)];
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
  const enclosed = (l: number) =>
    hits[l]! > 0 &&
    escaped[l]! <= ESCAPE_SHARE * hits[l]! &&
    open[l]! <= OPEN_SHARE * (hits[l]! + open[l]!);
  // Brighter than the fit there: wall when no brighter than the wall beside it, and pixel by
  // pixel of its colour (shaded white fabric the region runs into at the outline is brighter, or
  // off its chroma: a white jeans' cool shade beside a warm grey wall).
  const beside = wallColourBeside(
    background,
    rgb,
    label,
    sizes,
    w,
    h,
    (l) => enclosed(l) && gain[l]! > SHADE_GAIN,
  );
  for (let i = 0; i < n; i++) {
    const l = owner[i]!;
    if (l < 0 || !enclosed(l)) continue;
    if (gain[l]! <= SHADE_GAIN || likeWallBeside(rgb, i, beside, l, t)) {
      opened[i] = 1;
      background[i] = 1;
    }
  }
  addRingedWall(background, wall, notWall, rgb, w, h, t, opened);
  return opened;
}

/** Pixels of mixed colour (an outline's last pixels) between such a region and what bounds it. */
const RINGED_STEPS = 5;
/** Share of the pixels met going out that clear subject (or background) must make. */
const RINGED_SHARE = 0.9;
/** Share of its pixels that must have the colour of the open wall beside it. */
const RINGED_LIKE = 0.8;
/** Chains of wall-coloured pixels thinner than twice this (px) are cut off a region. */
const RINGED_CHAIN = 3;
/**
 * Bounded by the background on at most this share: mostly enclosed. Shaded white fabric beside a
 * gap the background already holds (the crotch of white jeans) is bounded by it on 43%.
 */
const RINGED_OPEN = 0.25;
/**
 * Mean 3x3 luminance range (levels) inside such a region at most: the JPEG ringing around a gap
 * spreads it to 1-16, a print's pale parts between dark ones reach 30 and more.
 */
const RINGED_ROUGH = 20;
/** A gap is narrow: no pixel of it further than this share of the long side from its rim. */
const RINGED_DEPTH = 1 / 48;
/** A gap in the figure's shade is darkened a little, not as much as a grey print can be. */
const RINGED_GAIN_MIN = 0.8;

/**
 * A narrow gap (between forearm and hip, the top of a gap between the legs) holds little smooth
 * wall: JPEG ringing from the outlines around it spreads its 5x5 range, so the smooth regions
 * above miss it. Its pixels still have the wall's colour, and it is ringed by clear subject
 * straight away (no rim of other light). Such a region, wall-coloured (smooth or not), opens
 * when most of its pixels (RINGED_LIKE) have the colour of the open wall beside it on its rows,
 * at its level: then those pixels. A print's pale parts ringed by dark fabric are off the wall's
 * chroma or brighter than it.
 */
function addRingedWall(
  background: Uint8Array,
  wall: Uint8Array,
  notWall: Uint8Array,
  rgb: Uint8Array,
  w: number,
  h: number,
  t: number,
  opened: Uint8Array,
): void {
  const n = w * h;
  const candidate = new Uint8Array(n);
  for (let i = 0; i < n; i++) candidate[i] = wall[i] !== 0 && !background[i] ? 1 : 0;
  const { label, sizes } = components(candidate, w);
  const z = sizes.length;
  const depth = distanceToUnset(candidate, w, h);
  const deepest = new Float32Array(z);
  for (let i = 0; i < n; i++)
    if (label[i]! >= 0) deepest[label[i]!] = Math.max(deepest[label[i]!]!, depth[i]!);
  const narrow = Math.max(w, h) * RINGED_DEPTH;
  // Out through the mixed pixels of its outline (RINGED_STEPS) to what bounds it.
  const owner = Int32Array.from(label);
  let frontier: number[] = [];
  for (let i = 0; i < n; i++)
    if (label[i]! >= 0 && sizes[label[i]!]! >= MIN_AREA * n) frontier.push(i);
  const bounded = new Float64Array(z);
  const touching = new Float64Array(z);
  const escaped = new Float64Array(z);
  const nb = new Int32Array(4);
  for (let step = 1; step <= RINGED_STEPS && frontier.length; step++) {
    const next: number[] = [];
    for (const i of frontier) {
      neighbours4(i, w, n, nb);
      for (let k = 0; k < 4; k++) {
        const j = nb[k]!;
        if (j < 0 || j >= n || owner[j] !== -1) continue;
        const l = owner[i]!;
        if (background[j] || notWall[j]) {
          bounded[l]!++;
          if (background[j]) touching[l]!++;
          continue;
        }
        owner[j] = l;
        next.push(j);
      }
    }
    frontier = next;
  }
  for (const i of frontier) escaped[owner[i]!]!++;
  const ringed = (l: number) =>
    sizes[l]! >= MIN_AREA * n &&
    deepest[l]! <= narrow &&
    bounded[l]! > 0 &&
    escaped[l]! <= (1 - RINGED_SHARE) * bounded[l]! &&
    touching[l]! <= RINGED_OPEN * bounded[l]!;
  const beside = wallColourBeside(background, rgb, label, sizes, w, h, ringed);
  const like = new Float64Array(z);
  const gain = new Float64Array(z);
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l < 0 || !ringed(l) || Number.isNaN(beside[l * 3]!)) continue;
    const c = l * 3;
    const level = 0.299 * beside[c]! + 0.587 * beside[c + 1]! + 0.114 * beside[c + 2]!;
    gain[l]! += (luma(rgb, i) + 1) / (level + 1) / sizes[l]!;
    if (likeWallBeside(rgb, i, beside, l, t)) like[l]!++;
  }
  const rough = new Float64Array(z);
  const inner = new Float64Array(z);
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    const x = i % w;
    if (l < 0 || !ringed(l) || depth[i]! < 2 || x < 1 || x > w - 2 || i < w || i >= n - w) continue;
    let lo = 255;
    let hi = 0;
    for (let dy = -w; dy <= w; dy += w)
      for (let dx = -1; dx <= 1; dx++) {
        const v = luma(rgb, i + dy + dx);
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    rough[l]! += hi - lo;
    inner[l]!++;
  }
  // Opened, so a print's pale facets touching a gap in a thin chain stay.
  const body = dilate(erode(candidate, w, h, RINGED_CHAIN), w, h, RINGED_CHAIN);
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (
      l < 0 ||
      !ringed(l) ||
      like[l]! < RINGED_LIKE * sizes[l]! ||
      gain[l]! < RINGED_GAIN_MIN ||
      !inner[l] ||
      rough[l]! > RINGED_ROUGH * inner[l]!
    )
      continue;
    if (body[i] && likeWallBeside(rgb, i, beside, l, t)) opened[i] = background[i] = 1;
  }
}

/** Whether pixel `i` is the wall beside region `l` (`beside`, 3 values per region) in some shade. */
function likeWallBeside(
  rgb: Uint8Array,
  i: number,
  beside: Float32Array,
  l: number,
  t: number,
): boolean {
  const c = l * 3;
  const level = 0.299 * beside[c]! + 0.587 * beside[c + 1]! + 0.114 * beside[c + 2]!;
  const s = (luma(rgb, i) + 1) / (level + 1);
  if (!(s <= BESIDE_GAIN)) return false;
  let dev = 0;
  for (let k = 0; k < 3; k++) dev = Math.max(dev, Math.abs(rgb[i * 3 + k]! - s * beside[c + k]!));
  return dev <= t + BESIDE_SLACK;
}

/**
 * Per region (of `label`, those `asked`): the open wall's colour beside it (wallBeside, within
 * BESIDE_REACH of the width around its box), when the region is on average at most BESIDE_GAIN
 * of its level; else NaN.
 */
function wallColourBeside(
  background: Uint8Array,
  rgb: Uint8Array,
  label: Int32Array,
  sizes: number[],
  w: number,
  h: number,
  asked: (l: number) => boolean,
): Float32Array {
  const z = sizes.length;
  const out = new Float32Array(z * 3).fill(NaN);
  const want = Uint8Array.from({ length: z }, (_, l) => (asked(l) ? 1 : 0));
  if (!want.some((v) => v)) return out;
  const x0 = new Int32Array(z).fill(w);
  const x1 = new Int32Array(z).fill(-1);
  const y0 = new Int32Array(z).fill(h);
  const y1 = new Int32Array(z).fill(-1);
  const mean = new Float64Array(z);
  for (let i = 0; i < w * h; i++) {
    const l = label[i]!;
    if (l < 0 || !want[l]) continue;
    const x = i % w;
    const y = (i - x) / w;
    x0[l] = Math.min(x0[l]!, x);
    x1[l] = Math.max(x1[l]!, x);
    y0[l] = Math.min(y0[l]!, y);
    y1[l] = Math.max(y1[l]!, y);
    mean[l]! += luma(rgb, i) / sizes[l]!;
  }
  const reach = Math.round(w * BESIDE_REACH);
  for (let l = 0; l < z; l++) {
    if (!want[l]) continue;
    const box = {
      x0: Math.max(0, x0[l]! - reach),
      x1: Math.min(w - 1, x1[l]! + reach),
      y0: y0[l]!,
      y1: y1[l]!,
    };
    const colour = wallBeside(background, rgb, w, box, BESIDE_MIN * sizes[l]!);
    if (!colour) continue;
    const level = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2];
    if (mean[l]! <= BESIDE_GAIN * level) out.set(colour, l * 3);
  }
  return out;
}
