/**
 * Which pixels are backdrop: a flood from the frame through pixels that match a modelled backdrop
 * surface (refitted as the flood grows), through cast shadows (a smooth, neutral darkening of the
 * backdrop, stopped by edges), plus enclosed pockets of clear backdrop (between arm and body),
 * plus, on a digital backdrop, the noise a pasted cut-out brought with it.
 * Everything else connected and sizeable is the subject.
 */
import { sigmaMean } from './denoise';
import { fitBackdrop, renderBackdrop, type Backdrop } from './backdrop';
import { addContactShadows, clearBeside } from './contact-shadow';
import { addFloor } from './floor';
import { addLitWall, wallModel } from './lit-wall';
import { addWallGaps } from './wall-gaps';
import { shadeOf } from './shade';
import {
  SMOOTH_EXACT,
  refitSmooth,
  renderSmooth,
  smoothBackdrop,
  smoothSeeds,
} from './smooth-backdrop';
import {
  borderPixels,
  components,
  dilate,
  boxSum,
  distanceToUnset,
  erode,
  flood,
  growRegions,
  floodShallow,
  neighbours4,
  touchingBackground,
} from './morphology';

export type Segmentation = {
  /** 1 = subject, at working resolution. */
  fg: Uint8Array;
  backdrop: Backdrop;
  /** The backdrop colour per pixel (RGB floats) at working resolution. */
  surface: Float32Array;
  /** Per-pixel distance to the backdrop (max over channels, in levels). */
  distance: Float32Array;
  /** Levels of difference the backdrop's own noise reaches. */
  tolerance: number;
};

const invert = (mask: Uint8Array): Uint8Array => Uint8Array.from(mask, (v) => (v ? 0 : 1));

const maxChannelDistance = (rgb: Uint8Array, surface: Float32Array, n: number): Float32Array => {
  const d = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * 3;
    d[i] = Math.max(
      Math.abs(rgb[o]! - surface[o]!),
      Math.abs(rgb[o + 1]! - surface[o + 1]!),
      Math.abs(rgb[o + 2]! - surface[o + 2]!),
    );
  }
  return d;
};

/**
 * Span (px) of the ring over which a soft step between two flat stretches is cut too: 050105_1's
 * white sleeve, cropped at the frame, meets the beige backdrop over about 8 px, at most 5 levels
 * per 2 px, and was seeded as backdrop (crop10 0.934 -> 0.989). Without the flat sides it also cut
 * 052767_0's cove along the bottom of the frame into runs no longer seeded (its floor stayed).
 */
const SOFT_STEP = 6;
/** Length (px) of the flat stretch each side of a soft step. */
const FLAT_SIDE = 4;
/** Levels within which each side counts as flat (a cove or vignette changes by more over it). */
const FLAT_LEVELS = 4;

/**
 * The frame pixels that show backdrop: the ring is cut into runs at sharp or soft steps; the
 * longest run is backdrop, and so is every run of similar colour or long enough to be a backdrop
 * band (a padding strip, which runs into a corner: a figure cut by the bottom edge, its shorts
 * along a tenth of the frame, does not). Runs where the subject touches the frame are left out.
 */
function frameSeeds(rgb: Uint8Array, w: number, h: number): number[] {
  return frameRuns(rgb, w, h).flat();
}

/** frameSeeds' pixels as the runs of the ring they were cut into. */
function frameRuns(rgb: Uint8Array, w: number, h: number): number[][] {
  const ring: number[] = [];
  for (let x = 0; x < w; x++) ring.push(x);
  for (let y = 1; y < h; y++) ring.push(y * w + w - 1);
  for (let x = w - 2; x >= 0; x--) ring.push((h - 1) * w + x);
  for (let y = h - 2; y >= 1; y--) ring.push(y * w);
  const n = ring.length;
  const step = (a: number, b: number) =>
    Math.max(
      Math.abs(rgb[a * 3]! - rgb[b * 3]!),
      Math.abs(rgb[a * 3 + 1]! - rgb[b * 3 + 1]!),
      Math.abs(rgb[a * 3 + 2]! - rgb[b * 3 + 2]!),
    );
  const cut = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (step(ring[k]!, ring[(k + 2) % n]!) > 10) cut[(k + 1) % n] = 1;
  // A soft edge (a sleeve crossing the frame out of focus) steps by less over 2 px, but joins two
  // flat stretches; a gradient (a cove, a vignette) keeps changing beyond it.
  for (let k = 0; k < n; k++) {
    const a = ring[k]!;
    const b = ring[(k + SOFT_STEP) % n]!;
    if (
      step(a, b) > 10 &&
      step(ring[(k - FLAT_SIDE + n) % n]!, a) <= FLAT_LEVELS &&
      step(b, ring[(k + SOFT_STEP + FLAT_SIDE) % n]!) <= FLAT_LEVELS
    )
      cut[(k + SOFT_STEP / 2) % n] = 1;
  }
  const runs: number[][] = [];
  let current: number[] = [];
  const first = cut.indexOf(1);
  for (let k = 0; k < n; k++) {
    const at = (k + Math.max(0, first)) % n;
    if (cut[at]) {
      if (current.length) runs.push(current);
      current = [];
      continue;
    }
    current.push(ring[at]!);
  }
  if (current.length) runs.push(current);
  if (!runs.length) return [ring];
  const median = (run: number[]) =>
    [0, 1, 2].map((c) => {
      const v = run.map((i) => rgb[i * 3 + c]!).sort((a, b) => a - b);
      return v[v.length >> 1]!;
    });
  const longest = runs.reduce((a, b) => (b.length > a.length ? b : a));
  const ref = median(longest);
  const corners = new Set([0, w - 1, (h - 1) * w, h * w - 1]);
  const seeds: number[][] = [];
  for (const run of runs) {
    const m = median(run);
    const close = Math.max(...m.map((v, c) => Math.abs(v - ref[c]!))) <= 12;
    const band = run.length >= n * 0.1 && run.some((i) => corners.has(i));
    if (run === longest || close || band) seeds.push(run);
  }
  return seeds;
}

/**
 * The level the backdrop's residual stays under, from pixels well inside the background: taken
 * over 3x3 neighbourhoods, since the flood's core test asks all nine to match.
 */
function noiseTolerance(
  distance: Float32Array,
  background: Uint8Array,
  w: number,
  h: number,
): number {
  const inner = erode(background, w, h, 4);
  const hist = new Uint32Array(256);
  let total = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      if (!inner[i]) continue;
      let m = 0;
      for (let dy = -w; dy <= w; dy += w)
        for (let dx = -1; dx <= 1; dx++) m = Math.max(m, distance[i + dy + dx]!);
      hist[Math.min(255, Math.round(m))]!++;
      total++;
    }
  }
  if (!total) return 3;
  let acc = 0;
  let p = 0;
  while (p < 255 && (acc += hist[p]!) < total * 0.99) p++;
  return Math.max(0.5, Math.min(16, p + 0.5));
}

/**
 * Sensor and compression noise, measured where it cannot be confused with the subject: the
 * differences between neighbouring frame-seed pixels (90th percentile, in levels).
 */
function frameNoise(rgb: Uint8Array, w: number, seeds: number[]): number {
  const hist = new Uint32Array(256);
  let total = 0;
  for (const i of seeds) {
    const j = i % w < w - 1 ? i + 1 : i - 1;
    const k = i >= w ? i - w : i + w;
    for (const o of [j, k]) {
      for (let c = 0; c < 3; c++) {
        hist[Math.abs(rgb[i * 3 + c]! - rgb[o * 3 + c]!)]!++;
        total++;
      }
    }
  }
  let acc = 0;
  let p = 0;
  while (p < 255 && (acc += hist[p]!) < total * 0.9) p++;
  return p;
}

const colourKey = (rgb: Uint8Array, i: number) =>
  (rgb[i * 3]! << 16) | (rgb[i * 3 + 1]! << 8) | rgb[i * 3 + 2]!;

/** Share of the frame seeds a digital backdrop's one colour holds at least. */
const FLAT_SHARE = 0.8;
/** Share of the other seeds that must be brighter than it somewhere (fabric, not shadow). */
const BRIGHTER_SHARE = 0.25;

/**
 * Share of a frame run the flat colour holds, at least, for the run to be all backdrop (or, at
 * most one minus it, none): the few pixels either side of a step the cut left in a run.
 */
const PURE_RUN = 0.99;

/** Levels off the flat colour that mark clear subject beside a frame seed. */
const CLEAR_SUBJECT = 30;
/** Pixels around a frame seed within which clear subject makes it the edge of fabric. */
const BESIDE = 3;
/** Share of the frame seeds, off a clipped white and away from fabric, above which the white is
 * lit with a cast shadow reaching the frame (the eval's shadowed photos on 255 leave 0.7% or more). */
const SHADOW_SHARE = 0.003;

/** Whether a pixel within BESIDE of frame seed `i` is clear subject (CLEAR_SUBJECT off `flat`). */
function besideSubject(rgb: Uint8Array, w: number, h: number, i: number, flat: number[]): boolean {
  const x0 = i % w;
  const y0 = (i - x0) / w;
  for (let y = Math.max(0, y0 - BESIDE); y <= Math.min(h - 1, y0 + BESIDE); y++)
    for (let x = Math.max(0, x0 - BESIDE); x <= Math.min(w - 1, x0 + BESIDE); x++) {
      const j = (y * w + x) * 3;
      if (flat.some((v, c) => Math.abs(rgb[j + c]! - v) > CLEAR_SUBJECT)) return true;
    }
  return false;
}

/**
 * A digital backdrop of one flat colour (a cut-out pasted on it): the colour all frame seeds
 * share exactly, else null. Or most of them (FLAT_SHARE): white fabric touching the frame is
 * within the run cut's 10 levels of the backdrop, so it joins the seeds, and it is brighter than
 * the backdrop in places, where a cast shadow reaching the frame of a lit backdrop only darkens.
 * Nothing is brighter than a clipped white (255): there the other seeds are fabric when they sit
 * beside clear subject (a soft edge where fabric crosses the frame) but for a few (SHADOW_SHARE),
 * where a cast shadow darkens a stretch of the frame away from it (white trousers cropped at the
 * waist, 051517_1, had been read as a gradient and lost their sides to the light-and-shade steps).
 * Shaded white fabric may be darker than a grey backdrop, though: a frame whose runs are each all
 * the flat colour or none of it is digital too, its other runs the subject met at a step. Light or
 * a shadow on a real backdrop shades the run it falls on by degrees, which leaves that run mixed
 * (07764_00, a white tee cropped into at the frame on 246 grey, 6 levels darker there: IoU 0.736
 * -> 0.974).
 */
function flatColour(rgb: Uint8Array, w: number, h: number, runs: number[][]): number | null {
  const seeds = runs.flat();
  const counts = new Map<number, number>();
  let best = 0;
  let colour = 0;
  for (const i of seeds) {
    const key = colourKey(rgb, i);
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    if (count > best) [best, colour] = [count, key];
  }
  if (best === seeds.length) return colour;
  if (best < FLAT_SHARE * seeds.length) return null;
  const flat = [colour >> 16, (colour >> 8) & 255, colour & 255];
  if (flat.every((v) => v === 255)) {
    let away = 0;
    for (const i of seeds)
      if (colourKey(rgb, i) !== colour && !besideSubject(rgb, w, h, i, flat)) away++;
    return away <= SHADOW_SHARE * seeds.length ? colour : null;
  }
  let brighter = 0;
  for (const i of seeds) if (flat.some((v, c) => rgb[i * 3 + c]! > v)) brighter++;
  if (brighter >= BRIGHTER_SHARE * (seeds.length - best)) return colour;
  const apart = runs.every((run) => {
    let same = 0;
    for (const i of run) if (colourKey(rgb, i) === colour) same++;
    return same >= PURE_RUN * run.length || same <= (1 - PURE_RUN) * run.length;
  });
  return apart ? colour : null;
}

/** The frame seeds, only those of the flat backdrop's colour when there is one. */
function backdropSeeds(rgb: Uint8Array, w: number, h: number, flat: number | null): number[] {
  const seeds = frameSeeds(rgb, w, h);
  return flat === null ? seeds : seeds.filter((i) => colourKey(rgb, i) === flat);
}

/** Every other pixel in both directions. */
function decimate(
  rgb: Uint8Array,
  w: number,
  h: number,
): { rgb: Uint8Array; w: number; h: number } {
  const hw = (w + 1) >> 1;
  const hh = (h + 1) >> 1;
  const out = new Uint8Array(hw * hh * 3);
  for (let y = 0; y < hh; y++) {
    for (let x = 0; x < hw; x++) {
      const s = (2 * y * w + 2 * x) * 3;
      const o = (y * hw + x) * 3;
      out[o] = rgb[s]!;
      out[o + 1] = rgb[s + 1]!;
      out[o + 2] = rgb[s + 2]!;
    }
  }
  return { rgb: out, w: hw, h: hh };
}

/**
 * Levels the frame's trend must rise under the subject above the frame's brightest for the fill
 * there to be lifted toward it: a strong lens vignette (k 0.61: 16-28 levels on the eval garments),
 * not light falling a little brighter in the middle (048554_1 reads 4.3, the most of any eval photo
 * under the sweep's other 17 changes; lifted there, the flood ran into the shaded side of its white
 * tee under noise 6: 0.966 -> 0.954).
 */
const VIGNETTE_RISE = 10;

/**
 * Grow and refit: a flood from the frame through pixels matching the fitted surface, the surface
 * refitted on what the flood found, until it stops growing; each pass's background teaches the
 * surface where the next pass may go.
 */
function growBackdrop(
  rgb: Uint8Array,
  w: number,
  h: number,
  cell: number,
  noise: number,
  flat: number | null,
  /** Least tolerance (levels) where the frame shows noise. */
  least: number,
): { backdrop: Backdrop; background: Uint8Array; tolerance: number; lifted: boolean } {
  const n = w * h;
  const seeds = backdropSeeds(rgb, w, h, flat);
  const known = new Uint8Array(n);
  for (const i of seeds) known[i] = 1;
  let backdrop = fitBackdrop(rgb, w, h, dilate(known, w, h, 1), cell);
  const lifted = backdrop.rise >= VIGNETTE_RISE;
  if (lifted) backdrop = fitBackdrop(rgb, w, h, dilate(known, w, h, 1), cell, undefined, true);
  let distance = maxChannelDistance(rgb, renderBackdrop(backdrop, w, h), n);
  // A noiseless frame is digital: one flat colour (a cut-out pasted on grey) takes exact matches
  // only; a smooth gradient (a heavily compressed sweep) steps a level at a time, and the fitted
  // surface lags those steps by a level or two.
  const exact = flat !== null ? 0.5 : 2.5;
  let tolerance = noise === 0 ? exact : Math.max(least, Math.min(16, 2 * noise + 0.5));
  let background = new Uint8Array(n);
  let found = 0;
  for (let pass = 0; pass < 10; pass++) {
    background = new Uint8Array(n);
    const t = tolerance;
    const d = distance;
    flood(background, seeds, w, (j) => d[j]! <= t);
    backdrop = fitBackdrop(rgb, w, h, erode(background, w, h, 1), cell, backdrop, lifted);
    distance = maxChannelDistance(rgb, renderBackdrop(backdrop, w, h), n);
    tolerance =
      noise === 0
        ? exact
        : Math.max(noiseTolerance(distance, background, w, h), Math.min(16, 2 * noise + 0.5));
    let count = 0;
    for (let i = 0; i < n; i++) count += background[i]!;
    if (pass >= 2 && count - found < n * 0.002) break;
    found = count;
  }
  return { backdrop, background, tolerance, lifted };
}

/**
 * Share of the compression's ringing within which a pocket's pixels match the backdrop (JPEG 60:
 * 0.3-0.5 opened the gaps between sleeve and body of 049940_1 alike; 1 took a white tee's shaded
 * fabric as a pocket, 07764_00 0.974 -> 0.919).
 */
const POCKET_RINGING = 0.4;

/**
 * Share of the compression's ringing a cast shadow may deviate from a neutral shade by, beyond the
 * backdrop's own noise (JPEG 60: 0.3 took the shadow under 050191_1's green tee, halo 42.5 -> 8.2;
 * 0.5 also took 048554_1's shaded white tee, 0.990 -> 0.983; on digital 246 grey, 0.3 took white
 * stripes, 00151_00 0.946 -> 0.832).
 */
const SHADOW_RINGING = 0.3;

/** Levels (5x5 range) within which a patch counts as flat. */
const FLAT_RANGE = 2;
/**
 * Opening (px) that a flat patch must survive in a JPEG ringing by more than FLAT_RANGE: two 8 px
 * blocks each way (JPEG 60: 6-12 kept 12562_00's white tee from the flood alike, 0.903 -> 0.937;
 * 5 did not).
 */
const BLOCKY_PATCH = 8;

/** Frame noise (levels, see frameNoise) from which the backdrop is told apart on averages. */
const NOISY = 4;

/** Radius of the box a noisy frame's pixels are averaged over at least: 5x5, a fifth of the noise. */
const DENOISE = 2;
/** Levels within which a noisy flat backdrop's averaged frame stays (noise sigma 3 -> 0.6). */
const EVEN = 2.5;
/** frameNoise (a 90th percentile of neighbour differences) in sigmas of the pixels' noise. */
const NOISE_SIGMAS = 2.33;
/** Sigma (levels) the averaging brings a noisy frame's noise down to, about: the 5x5 mean at 3. */
const AVERAGED_SIGMA = 0.6;

/**
 * Radius of the box a frame with noise `sigma` is averaged over: wide enough to bring the noise
 * down to AVERAGED_SIGMA. White fabric on a digital grey can differ from it by a level or two
 * only (12562_00's tee, 246 on 246 with its blue 2 levels down): at sigma 6 the 5x5 mean strays
 * by 1.2, the tolerance that lets the backdrop through lets that fabric through too.
 */
function denoiseRadius(sigma: number): number {
  return Math.max(DENOISE, Math.round((sigma / AVERAGED_SIGMA - 1) / 2));
}

/**
 * The tolerance on a digital backdrop seen through noise `sigma`, once averaged over a box of
 * `radius`: twice the averaged noise's sigma, rounded to whole levels as the means are. The
 * grow-and-refit passes' floor (EVEN, 2.5) had let the flood through white fabric 1-2 levels off
 * the backdrop: at noise sigma 3 it took 12562_00's white tee (0.678 -> 0.969) and 00151_00's
 * white stripes (0.688 -> 0.843).
 */
function averagedTolerance(sigma: number, radius: number): number {
  return Math.max(1, Math.round((2 * sigma) / (2 * radius + 1)));
}

/**
 * Share of the frame's channel values at exactly 255 from which the frame is a white the camera
 * clipped, seen through noise added after the clipping: the noise's lower half stays (about half
 * the values sit at 255; a 246 grey under noise sigma 6 puts 7% there, 250 about 20%).
 */
const CLIPPED_SHARE = 0.45;

/**
 * Sensor noise sigma (levels) on a clipped white frame, else 0. Clipping hides the noise's upper
 * half and a neighbour's difference with it, so frameNoise reads about 0.6 sigma of what it is
 * (sigma 6: 8 levels, where an unclipped frame reads 13); the mean shortfall below 255 of a
 * Gaussian clipped at its own mean is sigma / sqrt(2 pi).
 */
function clippedNoiseSigma(photo: Uint8Array, seeds: number[]): number {
  if (!seeds.length) return 0;
  let at255 = 0;
  let shortfall = 0;
  for (const i of seeds)
    for (let c = 0; c < 3; c++) {
      const v = photo[i * 3 + c]!;
      if (v === 255) at255++;
      shortfall += 255 - v;
    }
  const values = 3 * seeds.length;
  return at255 >= CLIPPED_SHARE * values ? (Math.sqrt(2 * Math.PI) * shortfall) / values : 0;
}

/** frameNoise a noiseless frame reads where a smooth fall-off steps a level from pixel to pixel. */
const STEEP_ROUNDING = 1;

/** Radius of the box over which a noisy photo's pixels' roughness is read (texturedBeyondNoise). */
const ROUGH_RADIUS = 2;
/**
 * Mean square of a pixel's step off its neighbours' mean (across and down), in units of what the
 * noise alone gives it (1.5 sigma^2), that a 5x5 box keeps at most where it shows nothing but
 * noise: read over 150 values, that mean strays by about a sixth.
 */
const NOISE_ROUGHNESS = 2;
/** Pixels of roughness either side of an outline that are not texture (the box's radius). */
const OUTLINE_ROUGH = 2;

/**
 * Where the photo is rougher than its noise `sigma` explains: texture or an edge, which no
 * backdrop or cast shadow shows. Roughness is each pixel's step off the mean of its two
 * neighbours, across and down: noise gives it 1.5 sigma^2 on average, a smooth shade (a soft
 * shadow's ramp) nothing. Averaging for the noise flattens a print's texture as well (053786_1's
 * gingham, read as its 9x9 mean, is a smooth darker neutral, and passed for a cast shadow: noise
 * sigma 6, 7.5% of the dress taken); the roughness of the photo's own pixels still tells them apart.
 */
function texturedBeyondNoise(photo: Uint8Array, w: number, h: number, sigma: number): Uint8Array {
  const n = w * h;
  const square = new Float32Array(n);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const left = x > 0 ? i - 1 : i + 1;
      const right = x < w - 1 ? i + 1 : i - 1;
      const up = y > 0 ? i - w : i + w;
      const down = y < h - 1 ? i + w : i - w;
      for (let c = 0; c < 3; c++) {
        const v = photo[i * 3 + c]!;
        const across = v - (photo[left * 3 + c]! + photo[right * 3 + c]!) / 2;
        const along = v - (photo[up * 3 + c]! + photo[down * 3 + c]!) / 2;
        square[i]! += (across * across + along * along) / 6;
      }
    }
  const count = boxSum(new Float32Array(n).fill(1), w, h, ROUGH_RADIUS);
  const sum = boxSum(square, w, h, ROUGH_RADIUS);
  const limit = NOISE_ROUGHNESS * 1.5 * sigma * sigma;
  const rough = Uint8Array.from(sum, (v, i) => (v / count[i]! > limit ? 1 : 0));
  // An outline is rough for a few pixels either side; a print or a weave over wider ground. The
  // shadow beside a garment must still reach its outline (049940_1 noise3 halo 2.9 -> 10).
  return erode(rough, w, h, OUTLINE_ROUGH);
}

/** The (2r+1)^2 mean of every channel (edges clamped). */
function boxMean(rgb: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const n = w * h;
  const count = boxSum(new Float32Array(n).fill(1), w, h, r);
  const out = new Uint8Array(rgb.length);
  const channel = new Float32Array(n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) channel[i] = rgb[i * 3 + c]!;
    const sum = boxSum(channel, w, h, r);
    for (let i = 0; i < n; i++) out[i * 3 + c] = Math.round(sum[i]! / count[i]!);
  }
  return out;
}

/**
 * Frame seeds (in ring order) per stretch over which evenFrame reads the frame's colour: the
 * averaged noise is read down further (a ring pixel's box is cut by the frame: 15 of 25 pixels)
 * while light across the frame still shows from stretch to stretch.
 */
const EVEN_STRETCH = 32;

/**
 * Whether most of the frame (FLAT_SHARE of its stretches of seeds) lies within EVEN levels of its
 * median colour: a digital backdrop of one colour seen through sensor noise, once averaged. A lit
 * wall or a sweep shades by more than that across the frame. Read on stretches, not pixels: at
 * noise sigma 6 a ring pixel's averaged colour still strays by 1.5 levels (sigma), so 12562_00's
 * 246 grey passed pixel by pixel on 71% of the frame, was taken for a lit wall and flooded at 3.5
 * levels through the white tee (IoU 0.229).
 */
function evenFrame(rgb: Uint8Array, seeds: number[]): boolean {
  if (!seeds.length) return false;
  const stretches: number[][] = [];
  for (let k = 0; k < seeds.length; k += EVEN_STRETCH) {
    const part = seeds.slice(k, k + EVEN_STRETCH);
    stretches.push(
      [0, 1, 2].map((c) => part.reduce((a, i) => a + rgb[i * 3 + c]!, 0) / part.length),
    );
  }
  const median = [0, 1, 2].map((c) => {
    const v = stretches.map((s) => s[c]!).sort((a, b) => a - b);
    return v[v.length >> 1]!;
  });
  let even = 0;
  for (const s of stretches) if (median.every((m, c) => Math.abs(s[c]! - m) <= EVEN)) even++;
  return even >= FLAT_SHARE * stretches.length;
}

/**
 * The subject and backdrop of `photo` (RGB, `w` x `h`). `ringing`: levels the compression's
 * ringing reaches beside edges (see compression.ts), 0 when unknown.
 */
export function segment(photo: Uint8Array, w: number, h: number, ringing = 0): Segmentation {
  const n = w * h;
  const cell = Math.max(8, Math.round(Math.max(w, h) / 64));
  // Sensor noise (a high-ISO shot) spreads the backdrop as wide as white fabric is from it, and
  // cuts the frame's runs: on a noisy frame, pixels are read as their 5x5 mean.
  const rawRuns = frameRuns(photo, w, h);
  const rawSeeds = rawRuns.flat();
  const rawNoise = frameNoise(photo, w, rawSeeds);
  const noisy = rawNoise >= NOISY;
  // On a clipped white, the noise is read from its shortfall below 255 (frameNoise reads too little
  // there): at noise sigma 6 the flood held to 1 level stopped near the frame on 255 whites
  // (049920_1 0.445, 049940_1 0.450, 049805_1 0.635, 051517_1 0.359).
  const sigma = Math.max(rawNoise / NOISE_SIGMAS, clippedNoiseSigma(photo, rawSeeds));
  // The box is widened for noise the neighbour differences show: on a clipped white they read it
  // low, and there the 5x5 means held to the shortfall's noise already reach the targets.
  const radius = denoiseRadius(rawNoise / NOISE_SIGMAS);
  // A box wider than 5x5 carries the subject's colour past the outline's trim and fills gaps
  // narrower than itself (02015_00's straps under noise 6): there it averages within the noise only.
  // At 5x5 the plain mean stays: it greys white stripes enough to keep them off the backdrop (the
  // noise-aware mean took 00151_00's, noise3 0.952 -> 0.912).
  const rgb = !noisy
    ? photo
    : radius > DENOISE
      ? sigmaMean(photo, w, h, radius, sigma)
      : boxMean(photo, w, h, radius);
  const digital = flatColour(rgb, w, h, noisy ? frameRuns(rgb, w, h) : rawRuns);
  // A noiseless frame of no one colour may still be digital: a flat colour under a vignette. Where
  // a strong one falls steeply (corners at 39% of the light) the rounding steps a level between
  // neighbours on over a tenth of the frame, so frameNoise reads 1 there: smoothBackdrop's own test
  // (nearly every seed within SMOOTH_EXACT of the surface) is what tells it from sensor noise. The
  // eval's real backdrops read 0-2 and fail that test under any vignette or resampling.
  const smooth =
    digital === null && rawNoise <= STEEP_ROUNDING
      ? smoothBackdrop(photo, w, h, rawSeeds, (i, colour) => besideSubject(photo, w, h, i, colour))
      : null;
  let smoothSurface = smooth && renderSmooth(smooth, w, h);
  const frame = backdropSeeds(rgb, w, h, digital);
  const seeds = smoothSurface ? smoothSeeds(rgb, w, h, frame, smoothSurface) : frame;
  const noise = frameNoise(rgb, w, seeds);
  // A digital backdrop under that noise: no light or shadow falls on it (see below), and once
  // averaged its colour is known to within EVEN levels, where white fabric differs by a few.
  const evenNoisy = noisy && digital === null && evenFrame(rgb, seeds);
  // The surface is smooth, so the grow-and-refit passes run on every other pixel (decimated, not
  // averaged, so the noise the tolerances are measured from keeps its level): a quarter the work.
  const half = decimate(rgb, w, h);
  const {
    backdrop: fitted,
    tolerance: grown,
    lifted,
  } = growBackdrop(
    half.rgb,
    half.w,
    half.h,
    cell / 2,
    noise,
    digital,
    // Averaged over 5x5, a noisy frame's noise is a fifth of what it was.
    noisy ? EVEN : 4,
  );
  // A smooth digital surface is known to its rounding: the flood and pockets hold to that.
  const tolerance = smoothSurface ? SMOOTH_EXACT : grown;
  let backdrop: Backdrop = { ...fitted, width: w, height: h, cell };
  let surface = smoothSurface ?? renderBackdrop(backdrop, w, h);
  let distance = maxChannelDistance(rgb, surface, n);
  // On a noisy digital backdrop the flood and the steps after it are held to the averaged noise;
  // the pockets between arm and body, in the subject's shade, keep the wider grow tolerance.
  const t = evenNoisy ? averagedTolerance(sigma, radius) : tolerance;
  const like = new Uint8Array(n);
  for (let i = 0; i < n; i++) like[i] = distance[i]! <= t ? 1 : 0;
  const core = erode(like, w, h, 1);
  // Flat patches near the backdrop colour are backdrop too (a pasted patch, a padding strip of
  // another white), when flat over a wide area (an opening by 3 px): smooth white fabric is flat
  // only in spots, and those spots had carried the flood deep into white tees (12562_00). A JPEG
  // that rings by more than that flatness flattens fabric texture into whole 8 px blocks, so
  // there a patch must be flat over more than two blocks each way.
  const ranges = localRanges(rgb, w, h);
  const flat = new Uint8Array(n);
  for (let i = 0; i < n; i++) flat[i] = ranges.r2[i]! <= FLAT_RANGE && distance[i]! <= 8 ? 1 : 0;
  const open = ringing > FLAT_RANGE ? BLOCKY_PATCH : 3;
  const wide = dilate(erode(flat, w, h, open), w, h, open);
  for (let i = 0; i < n; i++) wide[i] = wide[i]! & flat[i]!;
  if (digital !== null || smoothSurface) keepPatchColour(wide, rgb, surface, distance, w);
  if (!evenNoisy) for (let i = 0; i < n; i++) if (wide[i]) core[i] = 1;
  const background = driftFlood(rgb, w, h, seeds, core, like, surface, t);
  // The surface refitted on everything found, for the shadow test and the edge unmixing.
  backdrop = fitBackdrop(rgb, w, h, erode(background, w, h, 1), cell, undefined, lifted);
  const refit = smoothSurface && refitSmooth(rgb, w, h, erode(background, w, h, 1));
  if (refit) smoothSurface = renderSmooth(refit, w, h);
  surface = smoothSurface ?? renderBackdrop(backdrop, w, h);
  distance = maxChannelDistance(rgb, surface, n);
  const trimLimit = Math.max(4, 2 * t + 2);
  const trimSteps = Math.max(3, Math.round(Math.max(w, h) / 170));
  trimEdge(background, distance, w, h, trimLimit, trimSteps);
  // A JPEG's noise inside a smooth shadow is a share of what it rings by beside an edge. Not on a
  // digital backdrop, where nothing casts a shadow and white fabric would pass for one.
  const shadowNoise = t >= 1 ? SHADOW_RINGING * ringing : 0;
  // Under noise, read on means, only pixels that vary no more than the noise may be shadow.
  const textured = noisy ? texturedBeyondNoise(photo, w, h, sigma) : undefined;
  addShadows(background, rgb, surface, distance, w, h, t, shadowNoise, textured);
  // A digital-looking white may be a lit one a coarse JPEG flattened (see addFlattenedShadows).
  if (t < 1 && ringing > FLAT_RANGE)
    addFlattenedShadows(background, rgb, surface, distance, w, h, t, ringing);
  // A backdrop of one exact colour is digital (a cut-out pasted on it): no light falls on it
  // unevenly and nothing casts a shadow there, while white fabric on it is smooth and as neutral.
  const lightAndShade = t >= 1 && !evenNoisy;
  if (lightAndShade) {
    const lit = addLitWall(background, rgb, surface, ranges, w, h, t);
    const floor = addFloor(background, rgb, w, h);
    if (floor.some((v) => v)) {
      // Wall the first pass could not reach (between the legs, above the floor) now borders it.
      const more = addLitWall(background, rgb, surface, ranges, w, h, t);
      for (let i = 0; i < n; i++) if (floor[i] || more[i]) lit[i] = 1;
    }
    // Wall the figure encloses (between arm and body, between the legs) in its shade.
    const gaps = addWallGaps(
      background,
      wallModel(background, rgb, surface, ranges, w, h, t),
      rgb,
      surface,
      w,
      h,
      t,
    );
    for (let i = 0; i < n; i++) if (gaps[i]) lit[i] = 1;
    if (lit.some((v) => v)) {
      // The surface refitted with the wall found, so the last pixels before the outline (its
      // ringing and mixed pixels) are measured against the wall they lie on.
      backdrop = fitBackdrop(rgb, w, h, erode(background, w, h, 1), cell, undefined, lifted);
      surface = renderBackdrop(backdrop, w, h);
      distance = maxChannelDistance(rgb, surface, n);
      trimEdge(background, distance, w, h, trimLimit, trimSteps, lit);
    }
  }
  let fringe: Uint8Array | undefined;
  {
    // Pockets may sit in the subject's shade: a looser match, but flat and ringed by subject.
    const fine = ranges.r1;
    const loose = new Uint8Array(n);
    for (let i = 0; i < n; i++)
      loose[i] = distance[i]! <= Math.max(10, 3 * t) && fine[i]! <= 4 ? 1 : 0;
    // A narrow gap holds no block of flat backdrop: in a JPEG all of it rings a little. Under
    // noise its mean strays as far as the grow passes' tolerance: held to t, 00470_00's gaps
    // between sleeve and body stayed (noise3 0.992 -> 0.952, halo 1 -> 81).
    const match = Math.max(tolerance, POCKET_RINGING * ringing);
    const pockets = addEnclosedBackdrop(
      background,
      erode(loose, w, h, 1),
      distance,
      w,
      h,
      match,
      noisy ? AVERAGED_MATCHING : MATCHING,
    );
    // The pockets' own outlines carry the same ringing and mixed pixels as the outer one.
    trimEdge(background, distance, w, h, trimLimit, trimSteps, pockets);
    const gaps = addRingingGaps(background, rgb, surface, distance, w, h);
    trimEdge(background, distance, w, h, trimLimit, trimSteps, gaps);
    // After the pockets: a gap between the legs is a pocket while the feet's shadow closes it.
    if (lightAndShade) {
      const contact = addContactShadows(background, rgb, surface, w, h, t);
      if (contact.some((v) => v)) {
        // Wall the first pass could not reach (between the legs) may border the shadow.
        const more = addLitWall(background, rgb, surface, ranges, w, h, t);
        for (let i = 0; i < n; i++) if (more[i]) contact[i] = 1;
        // ...and wall the figure encloses, whose rim ran out through the shadow before.
        const wall = wallModel(background, rgb, surface, ranges, w, h, t);
        const enclosed = addWallGaps(background, wall, rgb, surface, w, h, t);
        for (let i = 0; i < n; i++) if (enclosed[i]) contact[i] = 1;
        trimEdge(background, distance, w, h, trimLimit, trimSteps, contact);
      }
    }
    // On a digital backdrop the flood takes exact matches only: the noise and ringing a pasted
    // cut-out brought with it stay, beside the subject. So do, under noise, the patches of backdrop
    // the flood held to the averaged noise did not reach (02015_00 noise3 halo 33 -> 10).
    if (t < 1 || evenNoisy) {
      fringe = addDigitalFringe(background, distance, w, h, t, ringing);
      trimEdge(background, distance, w, h, trimLimit, trimSteps, fringe);
    }
  }
  const fg = new Uint8Array(n);
  for (let i = 0; i < n; i++) fg[i] = background[i] ? 0 : 1;
  return { fg: keepSubject(fg, w, h, fringe), backdrop, surface, distance, tolerance };
}

/**
 * On a digital backdrop, a flat patch pasted on it holds one colour (to a level of JPEG noise);
 * fabric of the backdrop's own white that JPEG blocks flattened (07764_00 at quality 60) holds the
 * backdrop's exact colour in some blocks and a level brighter in the next. Where a patch's
 * commonest colour is the backdrop's, its pixels brighter in every channel, where they fill
 * block-sized areas (an opening by 3 px), are not a patch of another white: they had carried the
 * flood from block to block into a white tee. A thin brighter rim at the outline stays (taking it
 * raised the halo), as do pixels only tinted (JPEG chroma noise on the backdrop, 02015_00) or
 * darker (the backdrop in the shade of an arm gap, 00151_00): taking those cost IoU.
 */
function keepPatchColour(
  patches: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  distance: Float32Array,
  w: number,
): void {
  const { label, sizes } = components(patches, w);
  const brighter = new Uint8Array(patches.length);
  const counts = sizes.map(() => new Map<number, number>());
  const modal = new Int32Array(sizes.length).fill(-1);
  const best = new Int32Array(sizes.length);
  for (let i = 0; i < patches.length; i++) {
    const l = label[i]!;
    if (l < 0) continue;
    const key = colourKey(rgb, i);
    const count = (counts[l]!.get(key) ?? 0) + 1;
    counts[l]!.set(key, count);
    if (count > best[l]!) [best[l], modal[l]] = [count, i];
  }
  for (let i = 0; i < patches.length; i++) {
    const l = label[i]!;
    if (l < 0 || distance[modal[l]!]! > 0.5 || distance[i]! <= 0.5) continue;
    const j = i * 3;
    if ([0, 1, 2].every((c) => rgb[j + c]! >= surface[j + c]! + 0.5)) brighter[i] = 1;
  }
  const h = patches.length / w;
  const blocks = dilate(erode(brighter, w, h, 3), w, h, 3);
  for (let i = 0; i < patches.length; i++) if (blocks[i] && brighter[i]) patches[i] = 0;
}

/**
 * Per pixel, the largest (max - min) over channels in the 3x3 and the 5x5 box around it (the 5-wide
 * extremes are the 3-wide ones either side, so one pass serves both).
 */
function localRanges(rgb: Uint8Array, w: number, h: number): { r1: Uint8Array; r2: Uint8Array } {
  const n = w * h;
  const r1 = new Uint8Array(n);
  const r2 = new Uint8Array(n);
  const hi3 = new Uint8Array(n);
  const lo3 = new Uint8Array(n);
  const hi5 = new Uint8Array(n);
  const lo5 = new Uint8Array(n);
  const colHi3 = new Uint8Array(n);
  const colLo3 = new Uint8Array(n);
  for (let c = 0; c < 3; c++) {
    // Vertical 3-extremes, then horizontal 3- and 5-extremes of those.
    for (let y = 0; y < h; y++) {
      const up = y > 0 ? y - 1 : y;
      const down = y < h - 1 ? y + 1 : y;
      for (let x = 0; x < w; x++) {
        const a = rgb[(up * w + x) * 3 + c]!;
        const b = rgb[(y * w + x) * 3 + c]!;
        const d = rgb[(down * w + x) * 3 + c]!;
        let mx = a > b ? a : b;
        let mn = a < b ? a : b;
        if (d > mx) mx = d;
        if (d < mn) mn = d;
        colHi3[y * w + x] = mx;
        colLo3[y * w + x] = mn;
      }
    }
    for (let y = 0; y < h; y++) {
      const row = y * w;
      for (let x = 0; x < w; x++) {
        const l = x > 0 ? x - 1 : x;
        const r = x < w - 1 ? x + 1 : x;
        let mx = colHi3[row + l]!;
        let mn = colLo3[row + l]!;
        if (colHi3[row + x]! > mx) mx = colHi3[row + x]!;
        if (colLo3[row + x]! < mn) mn = colLo3[row + x]!;
        if (colHi3[row + r]! > mx) mx = colHi3[row + r]!;
        if (colLo3[row + r]! < mn) mn = colLo3[row + r]!;
        hi3[row + x] = mx;
        lo3[row + x] = mn;
      }
    }
    for (let y = 0; y < h; y++) {
      const up = y > 0 ? y - 1 : y;
      const down = y < h - 1 ? y + 1 : y;
      for (let x = 0; x < w; x++) {
        const l = x > 0 ? x - 1 : x;
        const r = x < w - 1 ? x + 1 : x;
        const a = up * w + l;
        const b = up * w + r;
        const c2 = down * w + l;
        const d = down * w + r;
        let mx = hi3[a]!;
        let mn = lo3[a]!;
        if (hi3[b]! > mx) mx = hi3[b]!;
        if (lo3[b]! < mn) mn = lo3[b]!;
        if (hi3[c2]! > mx) mx = hi3[c2]!;
        if (lo3[c2]! < mn) mn = lo3[c2]!;
        if (hi3[d]! > mx) mx = hi3[d]!;
        if (lo3[d]! < mn) mn = lo3[d]!;
        hi5[y * w + x] = mx;
        lo5[y * w + x] = mn;
      }
    }
    for (let i = 0; i < n; i++) {
      const d1 = hi3[i]! - lo3[i]!;
      const d2 = hi5[i]! - lo5[i]!;
      if (d1 > r1[i]!) r1[i] = d1;
      if (d2 > r2[i]!) r2[i] = d2;
    }
  }
  return { r1, r2 };
}

/**
 * The backdrop flood. A pixel joins when its 3x3 neighbourhood matches the fitted surface (so
 * the flood cannot squeeze through gaps under 3 px where fabric equals the backdrop), or matches
 * the backdrop colour carried along the flood's path from the last pixel that matched the
 * surface: a flat backdrop the surface cannot follow (a padding strip in another white) is still
 * followed, and an edge still stops it. Then one pixel of growth back to the exact edge.
 */
function driftFlood(
  rgb: Uint8Array,
  w: number,
  h: number,
  seeds: number[],
  core: Uint8Array,
  like: Uint8Array,
  surface: Float32Array,
  t: number,
): Uint8Array {
  const n = w * h;
  const background = new Uint8Array(n);
  const ref = new Float32Array(n * 3);
  const queue = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (const s of seeds) {
    if (background[s]) continue;
    background[s] = 1;
    for (let c = 0; c < 3; c++) ref[s * 3 + c] = rgb[s * 3 + c]!;
    queue[tail++] = s;
  }
  const near = (k: number, i: number) =>
    Math.abs(rgb[k * 3]! - ref[i * 3]!) <= t &&
    Math.abs(rgb[k * 3 + 1]! - ref[i * 3 + 1]!) <= t &&
    Math.abs(rgb[k * 3 + 2]! - ref[i * 3 + 2]!) <= t;
  const neighbourhoodNear = (j: number, i: number) => {
    const x = j % w;
    const y = (j - x) / w;
    for (let dy = -1; dy <= 1; dy++) {
      const yy = y + dy;
      if (yy < 0 || yy >= h) continue;
      for (let dx = -1; dx <= 1; dx++) {
        const xx = x + dx;
        if (xx >= 0 && xx < w && !near(yy * w + xx, i)) return false;
      }
    }
    return true;
  };
  const nb = new Int32Array(4);
  while (head < tail) {
    const i = queue[head++]!;
    neighbours4(i, w, n, nb);
    for (let k = 0; k < 4; k++) {
      const j = nb[k]!;
      if (j < 0 || j >= n || background[j]) continue;
      if (core[j]) {
        for (let c = 0; c < 3; c++) ref[j * 3 + c] = surface[j * 3 + c]!;
      } else if (neighbourhoodNear(j, i)) {
        for (let c = 0; c < 3; c++) ref[j * 3 + c] = ref[i * 3 + c]!;
      } else continue;
      background[j] = 1;
      queue[tail++] = j;
    }
  }
  const grown = dilate(background, w, h, 1);
  for (let j = 0; j < n; j++) {
    if (!grown[j] || background[j]) continue;
    if (like[j]) {
      background[j] = 1;
      continue;
    }
    neighbours4(j, w, n, nb);
    for (let k = 0; k < 4; k++) {
      const i = nb[k]!;
      if (i >= 0 && i < n && background[i] === 1 && near(j, i)) {
        background[j] = 2; // marked apart so this pass does not chain
        break;
      }
    }
  }
  for (let j = 0; j < n; j++) if (background[j] === 2) background[j] = 1;
  return background;
}

/**
 * JPEG ringing and the last mixed pixels: the background grows up to `steps` pixels further
 * through pixels within `limit` levels of the backdrop. Bounded, so faint fabric stays.
 */
function trimEdge(
  background: Uint8Array,
  distance: Float32Array,
  w: number,
  h: number,
  limit: number,
  steps: number,
  from?: Uint8Array,
): void {
  let frontier: number[] = [];
  const n = w * h;
  for (let i = 0; i < n; i++) {
    if (!background[i] || (from && !from[i])) continue;
    const x = i % w;
    if (
      (x > 0 && !background[i - 1]) ||
      (x < w - 1 && !background[i + 1]) ||
      (i >= w && !background[i - w]) ||
      (i + w < n && !background[i + w])
    )
      frontier.push(i);
  }
  const nb = new Int32Array(4);
  for (let step = 0; step < steps && frontier.length; step++) {
    const next: number[] = [];
    for (const i of frontier) {
      neighbours4(i, w, n, nb);
      for (let k = 0; k < 4; k++) {
        const j = nb[k]!;
        if (j >= 0 && j < n && !background[j] && distance[j]! <= limit) {
          background[j] = 1;
          next.push(j);
        }
      }
    }
    frontier = next;
  }
}

/** Levels from the backdrop that mark strong contrast (a print's lines, dark fabric). */
const STRONG_CONTRAST = 48;
/** Pixels around strong contrast that count as textured ground. */
const TEXTURE_REACH = 4;

/**
 * Cast shadows: the backdrop darkened evenly across channels (a neutral gain under 1, to within
 * `t` and the compression's `noise`, in levels) with no edge inside. Grown from the background,
 * so a grey garment (which ends at an edge) stays. Returns the pixels it added.
 */
function addShadows(
  background: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  distance: Float32Array,
  w: number,
  h: number,
  t: number,
  noise = 0,
  /** Pixels that vary beyond the noise (texture), never shadow. */
  textured?: Uint8Array,
): Uint8Array {
  const n = w * h;
  const shadow = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (textured?.[i]) continue;
    const o = i * 3;
    const by = 0.299 * surface[o]! + 0.587 * surface[o + 1]! + 0.114 * surface[o + 2]!;
    const iy = 0.299 * rgb[o]! + 0.587 * rgb[o + 1]! + 0.114 * rgb[o + 2]!;
    const s = (iy + 1) / (by + 1);
    if (s < 0.45 || s > 1) continue;
    let dev = 0;
    for (let c = 0; c < 3; c++) dev = Math.max(dev, Math.abs(rgb[o + c]! - s * surface[o + c]!));
    if (dev <= t + 2 + 10 * (1 - s) + noise) shadow[i] = 1;
  }
  // Seeds: shadow pixels touching the background; the flood then runs through shadow alone.
  const seeds = touchingBackground((i) => shadow[i] !== 0 && !background[i], background, w);
  const added = new Uint8Array(n);
  // Near strong contrast that is no shadow (a print's dark lines, gingham, denim, stripes), pale
  // neutral pixels are fabric (white stripes, checks, worn threads): the shadow flood goes only a
  // few pixels into such ground. A cast shadow beside a dark garment is still taken: its darkness
  // is shadow-like, so it is not strong, and its far side is open ground.
  const strong = new Uint8Array(n);
  for (let i = 0; i < n; i++) strong[i] = distance[i]! > STRONG_CONTRAST && !shadow[i] ? 1 : 0;
  const textureGround = dilate(strong, w, h, TEXTURE_REACH);
  floodShallow(
    added,
    seeds,
    w,
    (j) => shadow[j] === 1 && !background[j],
    t < 1 ? narrowAsTexture(textureGround, w, h) : textureGround,
    TEXTURE_REACH + 1,
  );
  // Cast shadows are strips along the outline; a thick region that looks like a shadow is pale
  // fabric the flood got into, so regions (spots closed) thicker than a strip are given back.
  const r = Math.max(6, Math.round(Math.max(w, h) / 50));
  const closed = erode(dilate(added, w, h, 3), w, h, 3);
  const depth = distanceToUnset(closed, w, h);
  const { label, sizes } = components(closed, w);
  const deepest = new Float32Array(sizes.length);
  for (let i = 0; i < n; i++)
    if (label[i]! >= 0) deepest[label[i]!] = Math.max(deepest[label[i]!]!, depth[i]!);
  const thick = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (label[i]! >= 0 && deepest[label[i]!]! > r) thick[i] = 1;
  for (let i = 0; i < n; i++) {
    if (added[i] && !thick[i]) background[i] = 1;
    else added[i] = 0;
  }
  return added;
}

/**
 * Open ground narrower than this many px each way (2 * CORRIDOR + 1) counts as textured ground
 * for the shadow flood on a digital backdrop.
 */
const CORRIDOR = 2;

/**
 * On a digital backdrop nothing casts a shadow, so the shadow flood only takes the outline's mixed
 * pixels: open ground it may run through freely must be wide. The core of a pale stripe between
 * dark ones (over TEXTURE_REACH from both) is a corridor a few px wide; tilted 3 degrees, 00151_00's
 * white stripes (a level or more under the 246 grey, as neutral) were flooded along that core from
 * the outline, 100+ px deep (tilt3 0.897). Corridors are opened away (eroded and dilated by
 * CORRIDOR) and count as textured ground, where the flood goes TEXTURE_REACH px only.
 */
function narrowAsTexture(textured: Uint8Array, w: number, h: number): Uint8Array {
  const n = w * h;
  const open = new Uint8Array(n);
  for (let i = 0; i < n; i++) open[i] = textured[i] ? 0 : 1;
  const wide = dilate(erode(open, w, h, CORRIDOR), w, h, CORRIDOR);
  const busy = new Uint8Array(n);
  for (let i = 0; i < n; i++) busy[i] = wide[i] && open[i] ? 0 : 1;
  return busy;
}

/**
 * Levels a flattened backdrop's cast shadow leans off a neutral shade on average over its region:
 * the ringing is chroma noise about the shade, while tinted fabric leans one way throughout. JPEG
 * 60: 051946_1's shadow regions 1.3-2.6 (a few small ones 4-5); the rims of 053744_1's pale green
 * tulle 4.8-6.7 and 04825_00's shaded white print 3.9-5.3, which cost IoU when taken (0.984 ->
 * 0.979, 0.972 -> 0.962).
 */
const SHADOW_LEAN = 3;

/**
 * A coarse JPEG flattens a lit white backdrop's faint shading into its clipped white, so it reads
 * as digital (one exact colour: no shadows are looked for), while the cast shadows beside the
 * garment stay, ringing in chroma (051946_1 at quality 60, halo 26). There shadows are taken with
 * the ringing allowed, but only regions beside subject of another colour (white fabric that passes
 * for shadow lies along more of it) that stay neutral on average (SHADOW_LEAN).
 */
function addFlattenedShadows(
  background: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  distance: Float32Array,
  w: number,
  h: number,
  t: number,
  ringing: number,
): void {
  const trial = Uint8Array.from(background);
  const added = addShadows(trial, rgb, surface, distance, w, h, t, ringing);
  const { label, sizes } = components(added, w);
  const beside = clearBeside(label, sizes.length, trial, rgb, surface, w, t);
  const lean = sizes.map(() => [0, 0, 0]);
  for (let i = 0; i < added.length; i++) {
    const l = label[i]!;
    if (l < 0) continue;
    const { s } = shadeOf(rgb, surface, i);
    for (let c = 0; c < 3; c++)
      lean[l]![c]! += (rgb[i * 3 + c]! - s * surface[i * 3 + c]!) / sizes[l]!;
  }
  const neutral = lean.map((v) => v.every((d) => Math.abs(d) <= SHADOW_LEAN));
  for (let i = 0; i < added.length; i++) {
    const l = label[i]!;
    if (l >= 0 && beside[l] && neutral[l]) background[i] = 1;
  }
}

/** Share of a pocket's pixels that match the backdrop, at least (true gaps: 58-83%). */
const MATCHING = 0.1;
/**
 * ...when the pixels are averaged (a noisy frame): averaging flattens fabric texture as it does
 * the noise, so a pocket's 3x3 range no longer tells them apart and the share must. The averaged
 * backdrop in a gap matches almost everywhere, as the open backdrop does (noise sigma 3 and 6:
 * 95-100% of 00470_00's and 00151_00's arm gaps); 00151_00's white stripes, ringed by its navy
 * ones, come near it in places only (12-33%), and had been opened (noise3 IoU 0.843).
 */
const AVERAGED_MATCHING = 0.6;

/**
 * Enclosed pockets of clear backdrop (core pixels the frame flood did not reach) that are not
 * tiny and ringed by clearly-not-backdrop pixels (an arm and the body). Inside pale fabric a
 * patch near the backdrop colour is ringed by more pale fabric and stays. Two rings are read:
 * 2-5 px out, and 2-12 px out for pockets that match the backdrop almost exactly (JPEG ringing
 * around a narrow gap fills the near ring; white fabric and a print's whites differ from a
 * digital backdrop by a level or more on average, the backdrop seen through a gap does not).
 * Returns the pixels it opened.
 */
function addEnclosedBackdrop(
  background: Uint8Array,
  core: Uint8Array,
  distance: Float32Array,
  w: number,
  h: number,
  t: number,
  /** Share of a pocket's pixels within `t` of the backdrop, at least. */
  matchShare: number,
): Uint8Array {
  const n = w * h;
  const pocket = new Uint8Array(n);
  for (let i = 0; i < n; i++) pocket[i] = core[i] && !background[i] ? 1 : 0;
  const { label, sizes } = components(pocket, w);
  const minArea = n * 0.0005;
  const owner = new Int32Array(n).fill(-1);
  const offset = new Float64Array(sizes.length);
  let seeded = false;
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l >= 0 && sizes[l]! >= minArea) {
      owner[i] = l;
      offset[l]! += distance[i]!;
      seeded = true;
    }
  }
  if (!seeded) return new Uint8Array(n);
  const NEAR = 5;
  const FAR = 12;
  const nearTotal = new Float64Array(sizes.length);
  const nearClear = new Float64Array(sizes.length);
  const farTotal = new Float64Array(sizes.length);
  const farClear = new Float64Array(sizes.length);
  growRegions(
    owner,
    w,
    FAR,
    (j) => pocket[j] !== 0,
    (j, l, step) => {
      if (step < 2) return;
      const clear = distance[j]! > 10 ? 1 : 0;
      farTotal[l]!++;
      farClear[l]! += clear;
      if (step <= NEAR) {
        nearTotal[l]!++;
        nearClear[l]! += clear;
      }
    },
  );
  // The backdrop seen through a gap matches it as closely as the open backdrop does in places
  // (true gaps: 58-83% of their pixels); shaded fabric of a print that only comes near it (8
  // levels off on 07764_00, 07382_00) does nowhere.
  const matching = new Float64Array(sizes.length);
  for (let i = 0; i < n; i++) if (label[i]! >= 0 && distance[i]! <= t) matching[label[i]!]!++;
  const exact = Math.max(1, t / 2);
  const open = (l: number) =>
    sizes[l]! >= minArea &&
    matching[l]! >= matchShare * sizes[l]! &&
    (nearClear[l]! >= 0.6 * nearTotal[l]! ||
      (offset[l]! / sizes[l]! <= exact && farClear[l]! >= 0.5 * farTotal[l]!));
  const take = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (label[i]! >= 0 && open(label[i]!)) take[i] = 1;
  const grown = dilate(take, w, h, 1);
  for (let i = 0; i < n; i++) {
    if (take[i] || (grown[i] && !background[i] && core[i])) {
      background[i] = 1;
      take[i] = 1;
    }
  }
  return take;
}

/**
 * Drops specks (components under 2% of the largest) and fills tiny holes in the subject, except
 * holes holding `opened` pixels (backdrop found on purpose: a narrow strap loop).
 */
function keepSubject(fg: Uint8Array, w: number, h: number, opened?: Uint8Array): Uint8Array {
  const n = w * h;
  const { label, sizes } = components(fg, w);
  if (!sizes.length) return fg;
  const largest = Math.max(...sizes);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    out[i] = label[i]! >= 0 && sizes[label[i]!]! >= largest * 0.02 ? 1 : 0;
  const holes = new Uint8Array(n);
  for (let i = 0; i < n; i++) holes[i] = out[i] ? 0 : 1;
  const bg = components(holes, w);
  const kept = new Set<number>();
  for (const i of borderPixels(w, h)) if (bg.label[i]! >= 0) kept.add(bg.label[i]!);
  if (opened)
    for (let i = 0; i < n; i++) if (opened[i] && bg.label[i]! >= 0) kept.add(bg.label[i]!);
  const minHole = n * 0.0002;
  for (let i = 0; i < n; i++) {
    const l = bg.label[i]!;
    if (l >= 0 && !kept.has(l) && bg.sizes[l]! < minHole) out[i] = 1;
  }
  return out;
}

/** A gap narrow enough for JPEG ringing (8 px blocks) to fill: wider ones keep an exact core. */
const GAP_DEPTH = 8;
/** Mean (5x5) residual, in levels, a gap's pixels keep on average. */
const GAP_MEAN = 3;
/** Spread (levels) of a gap's residual: ringing around a flat backdrop is smooth. */
const GAP_SPREAD = 1.8;

/**
 * Narrow gaps (between arm and body, inside a strap loop, a keyhole) show the backdrop through
 * JPEG ringing: no pixel matches it, so neither the flood nor the pockets take them, but the
 * ringing averages out. A region whose 5x5 mean stays near the backdrop is a gap when it is
 * narrow (at most GAP_DEPTH px from its rim), ringed by clear subject (a white stripe reaching
 * the outline is ringed by backdrop), and smooth: fabric texture, sequins and the shading of
 * white fabric spread the residual wider than ringing does. Returns the pixels it opened.
 */
function addRingingGaps(
  background: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  distance: Float32Array,
  w: number,
  h: number,
): Uint8Array {
  const n = w * h;
  const count = boxSum(new Float32Array(n).fill(1), w, h, 2);
  const near = new Float32Array(n);
  const residual = new Float32Array(n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) residual[i] = rgb[i * 3 + c]! - surface[i * 3 + c]!;
    const sum = boxSum(residual, w, h, 2);
    for (let i = 0; i < n; i++) near[i] = Math.max(near[i]!, Math.abs(sum[i]! / count[i]!));
  }
  const candidate = new Uint8Array(n);
  for (let i = 0; i < n; i++) candidate[i] = !background[i] && near[i]! <= 8 ? 1 : 0;
  const { label, sizes } = components(candidate, w);
  const minArea = n * 0.0001;
  const z = sizes.length;
  const meanNear = new Float64Array(z);
  const sumL = new Float64Array(z);
  const sumL2 = new Float64Array(z);
  const owner = new Int32Array(n).fill(-1);
  let seeded = false;
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l < 0 || sizes[l]! < minArea) continue;
    owner[i] = l;
    seeded = true;
    meanNear[l]! += near[i]! / sizes[l]!;
    const o = i * 3;
    const r =
      (rgb[o]! + rgb[o + 1]! + rgb[o + 2]! - surface[o]! - surface[o + 1]! - surface[o + 2]!) / 3;
    sumL[l]! += r / sizes[l]!;
    sumL2[l]! += (r * r) / sizes[l]!;
  }
  const take = new Uint8Array(n);
  if (!seeded) return take;
  // The ring 2-5 px out: clear subject all round for a gap.
  const ringTotal = new Float64Array(z);
  const ringClear = new Float64Array(z);
  growRegions(
    owner,
    w,
    5,
    (j) => candidate[j] !== 0,
    (j, l, step) => {
      if (step < 2) return;
      ringTotal[l]!++;
      if (!background[j] && distance[j]! > 10) ringClear[l]!++;
    },
  );
  const depth = distanceToUnset(candidate, w, h);
  const deepest = new Float32Array(z);
  for (let i = 0; i < n; i++)
    if (label[i]! >= 0) deepest[label[i]!] = Math.max(deepest[label[i]!]!, depth[i]!);
  const open = new Uint8Array(z);
  for (let l = 0; l < z; l++) {
    if (sizes[l]! < minArea) continue;
    const spread = Math.sqrt(Math.max(0, sumL2[l]! - sumL[l]! ** 2));
    open[l] =
      meanNear[l]! <= GAP_MEAN &&
      spread <= GAP_SPREAD &&
      deepest[l]! <= GAP_DEPTH &&
      ringClear[l]! >= 0.6 * ringTotal[l]!
        ? 1
        : 0;
  }
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l >= 0 && open[l]) background[i] = take[i] = 1;
  }
  return take;
}

/** Levels off a digital backdrop that JPEG noise and ringing around a pasted cut-out reach. */
const FRINGE_LEVELS = 4;
/** Ring pixels this far from the backdrop are clear subject. */
const FRINGE_CLEAR = 30;
/**
 * Ring pixels within this many times the fringe's level are left out of its ring: the backdrop's
 * noise just past that level counted against the fringe as much as fabric would. Cropped 10% (the
 * surface fitted a level off), 02015_00 kept speckled fringe along its neckline and sides, rings
 * under the 60% clear asked (crop10 halo 33.6 -> 25.3; original 15.0 -> 12.7, 00126_00 27 -> 25;
 * no photo's IoU moved by more than 0.001).
 */
const PALE = 2;
/**
 * ...or within this many levels: the bright rim a sharpened cut-out brought (02015_00's yellow top
 * on 246 grey: a rim 2-3 px wide up to 9 levels brighter than the backdrop in red, 2-6 off in the
 * rest, between the fringe and the fabric) counted against the fringe as not clear.
 */
const PALE_LEVELS = 12;
/** A fringe lies beside the subject: no pixel of it further than this from the subject... */
const FRINGE_DEPTH = 12;
/** ...nor, where the subject's own colours come near the backdrop's, from the background. */
const FRINGE_REACH = 8;
/** Subject interior (this far from the background) showing the backdrop's colour... */
const INTERIOR = 16;
/** ...on more than this share of it: fabric of the backdrop's colour (white on white). */
const ALIKE_SHARE = 0.01;

/**
 * On a digital backdrop (a cut-out pasted on one flat colour) the flood takes exact matches only,
 * so the noise and JPEG ringing the cut-out brought with it stay: regions within a few levels of
 * the backdrop (as many as the file's compression rings by, when more), touching the background,
 * ringed mostly (60%) by clear subject and never far from it. Where the subject's interior nowhere
 * shows the backdrop's colour, such a region may reach deep (a narrow gap between arm and body) or
 * be enclosed (inside a strap loop); otherwise it reaches only a few pixels (a JPEG block) from the
 * background, since a white stripe reaching the outline looks the same. Returns the pixels opened.
 */
function addDigitalFringe(
  background: Uint8Array,
  distance: Float32Array,
  w: number,
  h: number,
  t: number,
  ringing: number,
): Uint8Array {
  const n = w * h;
  const near = Math.max(FRINGE_LEVELS, t + 3, ringing);
  const candidate = new Uint8Array(n);
  for (let i = 0; i < n; i++) candidate[i] = !background[i] && distance[i]! <= near ? 1 : 0;
  const { label, sizes } = components(candidate, w);
  const z = sizes.length;
  const touches = new Uint8Array(z);
  const nb = new Int32Array(4);
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l < 0 || touches[l]) continue;
    neighbours4(i, w, n, nb);
    for (let k = 0; k < 4; k++) if (nb[k]! >= 0 && background[nb[k]!]) touches[l] = 1;
  }
  // The ring 2-5 px out, through the subject; pale pixels there are no evidence either way.
  const pale = Math.max(PALE * near, PALE_LEVELS);
  const total = new Float64Array(z);
  const clear = new Float64Array(z);
  growRegions(
    Int32Array.from(label),
    w,
    5,
    (j) => candidate[j] !== 0 || background[j] !== 0,
    (j, l, step) => {
      if (step < 2 || distance[j]! <= pale) return;
      total[l]!++;
      if (distance[j]! > FRINGE_CLEAR) clear[l]!++;
    },
  );
  const notSubject = new Uint8Array(n);
  for (let i = 0; i < n; i++) notSubject[i] = background[i] || candidate[i] ? 1 : 0;
  const fromSubject = distanceToUnset(notSubject, w, h);
  const fromBackground = distanceToUnset(invert(background), w, h);
  const deepest = new Float32Array(z);
  const furthest = new Float32Array(z);
  let interior = 0;
  let alike = 0;
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l >= 0) {
      deepest[l] = Math.max(deepest[l]!, fromSubject[i]!);
      furthest[l] = Math.max(furthest[l]!, fromBackground[i]!);
    }
    if (fromBackground[i]! >= INTERIOR) {
      interior++;
      if (distance[i]! <= near) alike++;
    }
  }
  const reach = alike <= ALIKE_SHARE * interior ? Infinity : FRINGE_REACH;
  // Enclosed ones too (a strap loop) where the subject shows no backdrop colour, unless specks.
  const minPocket = n * 0.00004;
  const take = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (
      l < 0 ||
      (!touches[l] && (reach !== Infinity || sizes[l]! < minPocket)) ||
      !total[l] ||
      deepest[l]! > FRINGE_DEPTH ||
      furthest[l]! > reach
    )
      continue;
    if (clear[l]! >= 0.6 * total[l]!) background[i] = take[i] = 1;
  }
  return take;
}
