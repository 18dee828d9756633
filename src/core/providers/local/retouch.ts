/**
 * amateur_to_pro: the backdrop goes to clean white and the white balance is corrected, while the
 * subject keeps its colours. The backdrop (which should be neutral) gives per-channel gains that
 * neutralise the cast; those gains alone are applied to the subject (no contrast stretch, no
 * saturation boost, no sharpening: they bleached dark garments and shifted product colours), and
 * bent below 255 rather than clipped. The matte then blends the subject over pure white, so the
 * backdrop, its shadows and blotches disappear; edge pixels are unmixed from the backdrop beside
 * them first. Fabric the matte missed is given back first: on a digital backdrop what differs
 * from its exact colour (keepOffBackdrop), and just outside the matte what the colour says is
 * garment (regainEdge).
 */
import { sharp } from '../../../infra/sharp';
import { decodeMeta, rgbPixels } from './image-io';
import { boxSum, components, dilate, erode, flood } from './matting/morphology';
import { computeMatte, matteAt } from './remove-background';

/** A channel is clipped on the backdrop when this share of its pixels sits at 254-255. */
const CLIPPED_SHARE = 0.5;

type WhiteBalance = {
  gains: [number, number, number];
  /** Channels clipped on the backdrop while another is not: a cast pushed them past white. */
  clipped: [boolean, boolean, boolean];
};

/**
 * Gains that make the backdrop neutral without changing its brightness. Where a cast pushed a
 * channel of the backdrop past 255, its mean says only "at least 255": taken as 255, the cast was
 * half corrected (049940_1 under a clipping pink cast: the white blouse stayed pink, median
 * Delta E 2000 against the original 10.5 with brightness matched; now 3.8).
 */
function backdropGains(
  data: Buffer,
  alpha: Buffer,
  width: number,
  height: number,
): WhiteBalance & { level: number[]; atWhite: boolean[] } {
  const pixels = width * height;
  const sum = [0, 0, 0];
  const atTop = [0, 0, 0];
  let count = 0;
  for (let i = 0; i < pixels; i++) {
    if (alpha[i]! >= 8) continue;
    for (let c = 0; c < 3; c++) {
      sum[c]! += data[i * 3 + c]!;
      if (data[i * 3 + c]! >= 254) atTop[c]!++;
    }
    count++;
  }
  if (count < pixels * 0.02) {
    return { gains: [1, 1, 1], clipped: [false, false, false], level: [], atWhite: [] };
  }
  const level = sum.map((s) => s / count);
  const clipped = atTop.map((n) => n >= count * CLIPPED_SHARE) as [boolean, boolean, boolean];
  // What the subject's check needs: the levels, and the channels at white.
  const found = { level, atWhite: [...clipped] };
  const past = pastWhiteOnLocus(level, clipped);
  if (past) return { gains: gainsFor(past) ?? [1, 1, 1], clipped: lit(past), ...found };
  if (clipped.filter(Boolean).length !== 1) {
    // Nothing clipped, or white; with two channels at 255 one of them may simply be white.
    return { gains: gainsFor(level) ?? [1, 1, 1], clipped: [false, false, false], ...found };
  }
  // At 255 exactly (a warm cast that only lowered green and blue) is not past it.
  const c0 = clipped.indexOf(true);
  const behind = backdropBehindEdges(data, alpha, width, height, level, c0);
  if (behind < 255 + PAST_WHITE) {
    return { gains: gainsFor(level) ?? [1, 1, 1], clipped: [false, false, false], ...found };
  }
  // A cast shifts the colour, not the exposure: a backdrop grey (w, w, w) before the cast keeps
  // its sum 3w, so the clipped channel held 3w less the others. The whitest w (255 down) that
  // asks for no more than a moderate cast gives the colour; the brightness stays what it is.
  const others = level.reduce((s, v, c) => (c === c0 ? s : s + v), 0);
  const grey = (level[0]! + level[1]! + level[2]!) / 3;
  for (let w = 255; 3 * w - others > level[c0]!; w -= 0.5) {
    const gains = gainsFor(
      level.map((v, c) => (c === c0 ? 3 * w - others : v)),
      grey,
    );
    if (gains) return { gains, clipped, ...found };
  }
  return { gains: gainsFor(level) ?? [1, 1, 1], clipped, ...found };
}

/**
 * Lighting casts run along the daylight locus: a white balance K warmer or cooler moves log(R/G)
 * by about -0.62 times log(B/G) (CIE daylight, 4000-25000 K, green held), in levels as in linear
 * light.
 */
const LOCUS_SLOPE = 0.62;

/**
 * A white backdrop with red and green at 255 and blue below was pushed warm, red past white; with
 * green and blue at 255 and red below, cool, blue past it. Their own level says only "255": the
 * locus gives the rest from the channel that shows the cast. Taken as 255, a warm cast kept its
 * red (051473_1 1000 K warmer: cream jeans left 4.4 Delta E from the original) and the drop shadow
 * of a digital backdrop stayed coloured and was kept as fabric (049805_1: 7% of the backdrop grey).
 * Null unless exactly that pattern.
 */
function pastWhiteOnLocus(level: number[], clipped: boolean[]): number[] | null {
  if (clipped.filter(Boolean).length !== 2 || !clipped[1]) return null;
  const below = clipped[0] ? 2 : 0;
  const ratio = 255 / Math.max(1, level[below]!);
  const slope = below === 2 ? LOCUS_SLOPE : 1 / LOCUS_SLOPE;
  return level.map((v, c) => (c === 2 - below ? 255 * ratio ** slope : v));
}

/** The channels above white in these levels. */
const lit = (level: number[]) => level.map((v) => v > 255) as [boolean, boolean, boolean];

/** Reach (px) of the fabric and the backdrop an edge pixel is read as a blend of. */
const BLEND_REACH = 4;
/** Blends nearer either end than these shares of fabric say too little about the backdrop. */
const BLEND_SHARE = { min: 0.15, max: 0.7 };
/** Contrast (levels, unclipped channels) below which a blend share cannot be read. */
const BLEND_CONTRAST = 40;
/** Fewer usable edge pixels than this and the channel is taken as not past white. */
const BLEND_MIN_PIXELS = 200;
/**
 * Levels past 255 the edge blends must show before the channel counts as pushed past white. JPEG
 * keeps colour at half resolution and pulls the blends beside clipped pixels down (a red truly
 * at 291 read 263), so this is a test, not a measure: the measure is the sum rule.
 */
const PAST_WHITE = 4;

/**
 * Whether the cast pushed the backdrop's clipped channel past 255, read at the subject's outline:
 * there a pixel blends the backdrop and the fabric beside it, and beside darker fabric the blend
 * is below 255 in that channel too. Its share of fabric, read from the unclipped channels, gives
 * the backdrop's value: (pixel - share * fabric) / (1 - share). The median over the outline, or
 * 0 where too few pixels tell.
 */
function backdropBehindEdges(
  data: Buffer,
  alpha: Buffer,
  width: number,
  height: number,
  level: number[],
  c0: number,
): number {
  const n = width * height;
  const solid = new Float32Array(n);
  const clear = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (alpha[i] === 255) solid[i] = 1;
    if (alpha[i]! < 8) clear[i] = 1;
  }
  const fabricCount = boxSum(solid, width, height, BLEND_REACH);
  const nearClear = dilate(clear, width, height, BLEND_REACH);
  const fabric: Float32Array[] = [];
  const channel = new Float32Array(n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) channel[i] = solid[i]! * data[i * 3 + c]!;
    fabric.push(boxSum(channel, width, height, BLEND_REACH));
  }
  const estimates: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!nearClear[i] || !fabricCount[i] || data[i * 3 + c0]! >= 250) continue;
    const own = fabric[c0]![i]! / fabricCount[i]!;
    if (own >= 250) continue;
    let dot = 0;
    let len = 0;
    for (let c = 0; c < 3; c++) {
      if (c === c0) continue;
      const f = fabric[c]![i]! / fabricCount[i]! - level[c]!;
      dot += (data[i * 3 + c]! - level[c]!) * f;
      len += f * f;
    }
    if (len < BLEND_CONTRAST * BLEND_CONTRAST) continue;
    const share = dot / len;
    if (share < BLEND_SHARE.min || share > BLEND_SHARE.max) continue;
    estimates.push((data[i * 3 + c0]! - share * own) / (1 - share));
  }
  if (estimates.length < BLEND_MIN_PIXELS) return 0;
  estimates.sort((a, b) => a - b);
  return estimates[estimates.length >> 1]!;
}

/** Gains that bring these backdrop levels to grey (their mean); null beyond a moderate cast. */
function gainsFor(
  level: number[],
  grey = (level[0]! + level[1]! + level[2]!) / 3,
): [number, number, number] | null {
  // A strongly coloured backdrop is a choice, not a cast: correct only moderate casts.
  const gains = level.map((m) => grey / Math.max(1, m));
  if (gains.some((g) => g < 0.85 || g > 1.15)) return null;
  return gains as [number, number, number];
}

/** Log-chromaticity bins per unit: log(R/G) and log(B/G) from -1 to 1. */
const CHROMA_BINS = 100;
const CHROMA_SIDE = 2 * CHROMA_BINS + 1;
/** A subject pixel within this log-chromaticity of grey (about 4% per channel) counts as neutral. */
const NEUTRAL_RADIUS = 0.04;
/**
 * Solid subject pixels darker or brighter than these tell nothing of the cast (noise, clipping):
 * dark fabric least of all, since a warm cast turns navy grey (050002_1 under a dim warm lamp,
 * its navy voting for no correction, 0.78 -> 3.56 with a floor of 32).
 */
const CHROMA_LEVELS = { min: 96, max: 249 };
/** Neutral fabric the evidence needs: this share of the readable subject, and this many pixels. */
const NEUTRAL_EVIDENCE = { share: 0.015, pixels: 500 };
/** The backdrop's own reading stands unless a candidate makes this many times more fabric neutral. */
const NEUTRAL_MARGIN = 1.25;
/** Gains beyond these are no lighting a studio shoots under. */
const GAIN_LIMITS = { min: 0.6, max: 1.7 };

const LOG_LEVEL = Float64Array.from({ length: 256 }, (_, v) => Math.log(Math.max(1, v)));

/**
 * Where the subject's well-exposed solid pixels sit in log-chromaticity (log R/G, log B/G): a
 * cast moves all of them, and the backdrop with them, by the same shift. Neutral fabric (white,
 * grey or black parts, labels, prints) then tells the cast apart from a backdrop's own colour.
 */
function subjectChroma(data: Buffer, alpha: Buffer, pixels: number) {
  const bins = new Float64Array(CHROMA_SIDE * CHROMA_SIDE);
  let readable = 0;
  for (let i = 0; i < pixels; i++) {
    if (alpha[i] !== 255) continue;
    const r = data[i * 3]!;
    const g = data[i * 3 + 1]!;
    const b = data[i * 3 + 2]!;
    if (Math.min(r, g, b) < CHROMA_LEVELS.min || Math.max(r, g, b) > CHROMA_LEVELS.max) continue;
    const u = Math.round((LOG_LEVEL[r]! - LOG_LEVEL[g]!) * CHROMA_BINS) + CHROMA_BINS;
    const v = Math.round((LOG_LEVEL[b]! - LOG_LEVEL[g]!) * CHROMA_BINS) + CHROMA_BINS;
    readable++;
    if (u < 0 || v < 0 || u >= CHROMA_SIDE || v >= CHROMA_SIDE) continue;
    bins[v * CHROMA_SIDE + u]!++;
  }
  const reach = Math.ceil(NEUTRAL_RADIUS * CHROMA_BINS);
  /** Pixels these gains make neutral. */
  const neutralUnder = (gains: readonly number[]): number => {
    const u0 = Math.round(-Math.log(gains[0]! / gains[1]!) * CHROMA_BINS) + CHROMA_BINS;
    const v0 = Math.round(-Math.log(gains[2]! / gains[1]!) * CHROMA_BINS) + CHROMA_BINS;
    let n = 0;
    for (let dv = -reach; dv <= reach; dv++) {
      for (let du = -reach; du <= reach; du++) {
        if (du * du + dv * dv > reach * reach) continue;
        const u = u0 + du;
        const v = v0 + dv;
        if (u >= 0 && v >= 0 && u < CHROMA_SIDE && v < CHROMA_SIDE) n += bins[v * CHROMA_SIDE + u]!;
      }
    }
    return n;
  };
  return { readable, neutralUnder };
}

/** Gains that bring these levels to grey, within what lighting does, or null. */
function anyCastGains(level: number[], grey: number): [number, number, number] | null {
  const gains = level.map((m) => grey / Math.max(1, m));
  if (gains.some((g) => g < GAIN_LIMITS.min || g > GAIN_LIMITS.max)) return null;
  return gains as [number, number, number];
}

/**
 * The backdrop's gains, checked against the subject. A backdrop tint is a cast only as far as it
 * tints the subject too: a beige or pastel backdrop is a choice, and the backdrop alone read it
 * as a cast (050105_1's white tee on its own beige backdrop was tinted blue, median Delta E 2000
 * 4.0 against the original; garments on a pastel pink one 7.0 on average), while a cast beyond
 * the backdrop-only bound of 15% (a dim, warm lamp) was left whole. Of none of the
 * backdrop's tint and all of it (unbounded up to GAIN_LIMITS), the one that makes more fabric
 * neutral wins when it clearly beats the backdrop's own reading. Without neutral fabric to
 * tell (a garment all in colour), the backdrop's reading stands as before.
 */
function neutralGains(data: Buffer, alpha: Buffer, width: number, height: number): WhiteBalance {
  const { level, atWhite, ...found } = backdropGains(data, alpha, width, height);
  // A backdrop at white in some channel is lit white, its tint the light's. (Past 255 the fabric
  // misled: shaded white fabric is a little warm, and a pale garment's own colour passed for
  // neutral.) Its reading stands.
  if (!level.length || atWhite.some(Boolean)) return found;
  const full = anyCastGains(level, (level[0]! + level[1]! + level[2]!) / 3);
  if (!full) return found;
  const { readable, neutralUnder } = subjectChroma(data, alpha, width * height);
  // None or all of it: a share in between was biased by shaded white fabric, a little warm, that
  // a warm cast left half corrected passed for neutral (049940_1 under a dim warm lamp 1.3 -> 3.9).
  const countNone = neutralUnder([1, 1, 1]);
  const countFull = neutralUnder(full);
  const [best, bestCount] =
    countFull > countNone ? [full, countFull] : [[1, 1, 1] as const, countNone];
  const needed = Math.max(NEUTRAL_EVIDENCE.pixels, NEUTRAL_EVIDENCE.share * readable);
  if (bestCount < needed || bestCount < NEUTRAL_MARGIN * neutralUnder(found.gains)) return found;
  return { gains: [...best] as [number, number, number], clipped: [false, false, false] };
}

/**
 * The colour of a digital backdrop (a cut-out pasted on one flat colour: nearly every background
 * pixel is that exact colour), or null for a photographed one (noise, gradients, shadows).
 */
export function flatBackdropColour(
  data: Buffer,
  alpha: Buffer,
  pixels: number,
): [number, number, number] | null {
  const counts = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < pixels; i++) {
    if (alpha[i] !== 0) continue;
    const key = (data[i * 3]! << 16) | (data[i * 3 + 1]! << 8) | data[i * 3 + 2]!;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    total++;
  }
  if (total < pixels * 0.05) return null;
  let mode = 0;
  let best = -1;
  for (const [key, n] of counts) if (n > best) ((best = n), (mode = key));
  const colour: [number, number, number] = [(mode >> 16) & 255, (mode >> 8) & 255, mode & 255];
  let near = 0;
  for (const [key, n] of counts) {
    const c = [(key >> 16) & 255, (key >> 8) & 255, key & 255];
    if (c.every((v, k) => Math.abs(v - colour[k]!) <= 1)) near += n;
  }
  return near >= total * FLAT_SHARE ? colour : null;
}

/** Share of background pixels within 1 level of the modal colour that marks a digital backdrop (real ones: <= 0.2). */
const FLAT_SHARE = 0.8;
/** Clear backdrop this far (px) from the subject shows the backdrop's own jitter, not fabric. */
const FAR_FROM_SUBJECT = 12;
/** Share of that far backdrop within the tolerance. */
const JITTER_SHARE = 0.99;
/** More jitter than this (levels) and white fabric could hide in it: the tolerance stops here. */
const MAX_JITTER = 2;

/**
 * How far (levels) the digital backdrop itself strays from its colour. A white one clipped at
 * 255 is exact, and JPEG keeps it so; a grey one strays by a level or two (JPEG noise, a pasted
 * patch a level off), and taking every stray pixel touching the subject for fabric kept a grey
 * box of backdrop around the garment (049947_1 darkened 15%: backdrop 246 after the retouch).
 */
function backdropJitter(
  alpha: Buffer,
  width: number,
  height: number,
  distance: (i: number) => number,
): number {
  const n = width * height;
  const subject = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (alpha[i]! > 0) subject[i] = 1;
  const nearSubject = dilate(subject, width, height, FAR_FROM_SUBJECT);
  const counts = new Array<number>(MAX_JITTER + 1).fill(0);
  let far = 0;
  for (let i = 0; i < n; i++) {
    if (nearSubject[i]) continue;
    far++;
    const d = distance(i);
    if (d <= MAX_JITTER) counts[d]!++;
  }
  let within = 0;
  for (let t = 0; t <= MAX_JITTER; t++) {
    within += counts[t]!;
    if (within >= far * JITTER_SHARE) return t;
  }
  return MAX_JITTER;
}

/** Opening radius: drops the thin JPEG ringing band outside a true edge, keeps fabric areas. */
const RING = 2;

/**
 * On a digital backdrop, the backdrop is one exact colour, so white fabric the cut-out took for
 * backdrop still gives itself away by differing from it (weave, shading, JPEG texture). Regions
 * off the backdrop colour, thicker than the ringing band and touching the subject, are subject:
 * whitening them bleached white-on-white garments.
 */
function keepOffBackdrop(data: Buffer, alpha: Buffer, width: number, height: number): void {
  const n = width * height;
  const bg = flatBackdropColour(data, alpha, n);
  if (!bg) return;
  const distance = (i: number): number =>
    Math.max(
      Math.abs(data[i * 3]! - bg[0]),
      Math.abs(data[i * 3 + 1]! - bg[1]),
      Math.abs(data[i * 3 + 2]! - bg[2]),
    );
  const tolerance = backdropJitter(alpha, width, height, distance);
  const off = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (alpha[i] !== 255 && distance(i) > tolerance) off[i] = 1;
  const opened = dilate(erode(off, width, height, RING), width, height, RING);
  for (let i = 0; i < n; i++) opened[i]! &= off[i]!;
  const seeds: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!opened[i]) continue;
    const x = i % width;
    if (
      (x > 0 && alpha[i - 1]! >= 128) ||
      (x < width - 1 && alpha[i + 1]! >= 128) ||
      (i >= width && alpha[i - width]! >= 128) ||
      (i + width < n && alpha[i + width]! >= 128)
    )
      seeds.push(i);
  }
  const kept = new Uint8Array(n);
  flood(kept, seeds, width, (j) => opened[j] === 1);
  dropEdgeRinging(data, alpha, kept, bg, width, height, distance);
  dropCastShadows(data, alpha, kept, bg, width, height);
  for (let i = 0; i < n; i++) if (kept[i]) alpha[i] = 255;
}

/** A cast shadow covers at least this share of the photo (the fabric regions kept: at most 0.3%)... */
const SHADOW_MIN_SHARE = 0.0025;
/** ...is this many levels darker than the backdrop on average, but not as dark as a garment's own colour... */
const SHADOW_DARK = { min: 12, max: 80 };
/** ...keeps the backdrop's hue (levels off the backdrop colour scaled to its brightness)... */
const SHADOW_MAX_TINT = 10;
/** ...and fades out: its rim on the clear backdrop is this many times lighter than its mean. */
const SHADOW_FADE = 6;

/**
 * A drop shadow on a digital backdrop is off its exact colour and touches the subject, so it was
 * kept as fabric and printed as a grey outline (049805_1: 3.5% of the backdrop under 250). What
 * sets it apart from fabric the matte missed: it is neutral, moderately dark and fades into the
 * backdrop, where fabric ends at an outline or carries its own colour. Such regions leave `kept`
 * (the matte said backdrop there).
 */
function dropCastShadows(
  data: Buffer,
  alpha: Buffer,
  kept: Uint8Array,
  bg: [number, number, number],
  width: number,
  height: number,
): void {
  const n = width * height;
  const { label, sizes } = components(kept, width);
  const m = sizes.length;
  const sums = [new Float64Array(m), new Float64Array(m), new Float64Array(m)];
  const rimDark = new Float64Array(m);
  const rim = new Float64Array(m);
  const bgLevel = bg[0] + bg[1] + bg[2];
  const clear = (j: number) => !kept[j] && alpha[j]! < 128;
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l < 0) continue;
    for (let c = 0; c < 3; c++) sums[c]![l]! += data[i * 3 + c]!;
    const x = i % width;
    if (
      (x > 0 && clear(i - 1)) ||
      (x < width - 1 && clear(i + 1)) ||
      (i >= width && clear(i - width)) ||
      (i + width < n && clear(i + width))
    ) {
      rim[l]!++;
      rimDark[l]! += (bgLevel - data[i * 3]! - data[i * 3 + 1]! - data[i * 3 + 2]!) / 3;
    }
  }
  const shadow = new Uint8Array(m);
  for (let l = 0; l < m; l++) {
    if (sizes[l]! < SHADOW_MIN_SHARE * n) continue;
    const mean = [0, 1, 2].map((c) => sums[c]![l]! / sizes[l]!);
    const level = mean[0]! + mean[1]! + mean[2]!;
    const dark = (bgLevel - level) / 3;
    const tint = Math.max(...mean.map((v, c) => Math.abs(v - (level / bgLevel) * bg[c]!)));
    const rimMean = rim[l]! ? rimDark[l]! / rim[l]! : dark;
    shadow[l] =
      dark >= SHADOW_DARK.min &&
      dark <= SHADOW_DARK.max &&
      tint <= SHADOW_MAX_TINT &&
      rimMean * SHADOW_FADE <= dark
        ? 1
        : 0;
  }
  for (let i = 0; i < n; i++) if (label[i]! >= 0 && shadow[label[i]!]) kept[i] = 0;
}

/** Reach (px) of the solid fabric whose contrast against the backdrop a kept region is set beside. */
const FABRIC_REACH = 6;
/** Ringing strays by less than this share of the edge's contrast... */
const RINGING_SHARE = 0.1;
/** ...and to both sides of the backdrop colour: its mean signed stray is under this share of its mean stray. */
const ONE_SIDED = 0.75;

/**
 * JPEG ringing and chroma bleed beside a strong edge: on a backdrop below white (grey, coloured,
 * a darker exposure) they are not clipped away, form blotches thicker than the opening removes,
 * and were kept as fabric (00055_00 darkened 15%: a ragged grey rim 10 px wide around the tee).
 * They oscillate around the backdrop colour by a small share of the edge's contrast; fabric the
 * matte missed sits on one side of it (white fabric darker than a white backdrop) or differs by
 * more. Regions that look like ringing leave `kept` (their matte alpha stays as it was).
 */
function dropEdgeRinging(
  data: Buffer,
  alpha: Buffer,
  kept: Uint8Array,
  bg: [number, number, number],
  width: number,
  height: number,
  distance: (i: number) => number,
): void {
  const n = width * height;
  const { label, sizes } = components(kept, width);
  const solid = new Float32Array(n);
  for (let i = 0; i < n; i++) if (alpha[i] === 255) solid[i] = 1;
  const count = boxSum(solid, width, height, FABRIC_REACH);
  const fabric: Float32Array[] = [];
  const channel = new Float32Array(n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) channel[i] = solid[i]! * data[i * 3 + c]!;
    fabric.push(boxSum(channel, width, height, FABRIC_REACH));
  }
  const m = sizes.length;
  const stray = new Float64Array(m);
  const signed = new Float64Array(m);
  const contrast = new Float64Array(m);
  const beside = new Float64Array(m);
  const bgLevel = bg[0] + bg[1] + bg[2];
  for (let i = 0; i < n; i++) {
    const l = label[i]!;
    if (l < 0) continue;
    stray[l]! += distance(i);
    signed[l]! += (data[i * 3]! + data[i * 3 + 1]! + data[i * 3 + 2]! - bgLevel) / 3;
    if (count[i]! > 0) {
      let d = 0;
      for (let c = 0; c < 3; c++) d = Math.max(d, Math.abs(fabric[c]![i]! / count[i]! - bg[c]!));
      contrast[l]! += d;
      beside[l]!++;
    }
  }
  const ringing = new Uint8Array(m);
  for (let l = 0; l < m; l++) {
    if (!beside[l]) continue; // no solid fabric near: nothing to ring from
    const meanStray = stray[l]! / sizes[l]!;
    ringing[l] =
      Math.abs(signed[l]! / sizes[l]!) < ONE_SIDED * meanStray &&
      meanStray < RINGING_SHARE * (contrast[l]! / beside[l]!)
        ? 1
        : 0;
  }
  for (let i = 0; i < n; i++) if (label[i]! >= 0 && ringing[label[i]!]) kept[i] = 0;
}

/** Where a gain above 1 starts to bend highlights down instead of clipping them. */
const KNEE = 235;

/**
 * A white-balance gain that never clips: above the knee, [KNEE, 255 * gain] maps linearly onto
 * [KNEE, 255]. A plain gain clipped white fabric on a warm backdrop (050105_1: 2.8% of the tee
 * newly at 255, its weave lost).
 */
function withGain(v: number, gain: number): number {
  const y = v * gain;
  if (gain <= 1 || y <= KNEE) return Math.min(255, y);
  return KNEE + ((255 - KNEE) * (y - KNEE)) / (255 * gain - KNEE);
}

/** Below this alpha the unmixed colour is too uncertain (noise over alpha): unmix as if this. */
const UNMIX_FLOOR = 0.25;
/** Radius (px) around an edge pixel in which the clear backdrop is averaged. */
const BACKDROP_RADIUS = 6;

/**
 * The backdrop's colour near each pixel: the mean of the clear backdrop pixels (alpha 0) within
 * a few px, so shading and cast shadows beside the edge are what gets unmixed; -1 where none.
 */
function localBackdrop(data: Buffer, alpha: Buffer, width: number, height: number): Float32Array {
  const n = width * height;
  const clear = new Float32Array(n);
  for (let i = 0; i < n; i++) clear[i] = alpha[i] === 0 ? 1 : 0;
  const count = boxSum(clear, width, height, BACKDROP_RADIUS);
  const out = new Float32Array(n * 3);
  const channel = new Float32Array(n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) channel[i] = clear[i]! * data[i * 3 + c]!;
    const sum = boxSum(channel, width, height, BACKDROP_RADIUS);
    for (let i = 0; i < n; i++) out[i * 3 + c] = count[i]! > 0 ? sum[i]! / count[i]! : -1;
  }
  return out;
}

/** How far outside the matte (px) fabric it trimmed is looked for. */
const EDGE_REACH = 3;
/** Below this contrast between garment and backdrop the colour cannot tell them apart. */
const MIN_CONTRAST = 40;

/**
 * The matte sits a pixel or two inside a real garment's edge in places (lace fringe, straps):
 * whitening those pixels bleached the outline. Just outside the matte, a pixel's alpha is read
 * from its colour, between the backdrop and the garment beside it; a cast shadow, only a little
 * darker than the backdrop, stays backdrop.
 */
function regainEdge(
  data: Buffer,
  alpha: Buffer,
  backdrop: Float32Array,
  width: number,
  height: number,
): void {
  const n = width * height;
  const solid = new Uint8Array(n);
  const solidF = new Float32Array(n);
  for (let i = 0; i < n; i++) if (alpha[i] === 255) ((solid[i] = 1), (solidF[i] = 1));
  const near = dilate(solid, width, height, EDGE_REACH);
  const count = boxSum(solidF, width, height, 2 * EDGE_REACH);
  const fg: Float32Array[] = [];
  const channel = new Float32Array(n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) channel[i] = solidF[i]! * data[i * 3 + c]!;
    fg.push(boxSum(channel, width, height, 2 * EDGE_REACH));
  }
  for (let i = 0; i < n; i++) {
    if (!near[i] || alpha[i] === 255 || !count[i] || backdrop[i * 3]! < 0) continue;
    let dot = 0;
    let len = 0;
    for (let c = 0; c < 3; c++) {
      const b = backdrop[i * 3 + c]!;
      const f = fg[c]![i]! / count[i]! - b;
      dot += (data[i * 3 + c]! - b) * f;
      len += f * f;
    }
    if (len < MIN_CONTRAST * MIN_CONTRAST) continue;
    const a = Math.min(1, dot / len);
    if (a > UNMIX_FLOOR) alpha[i] = Math.max(alpha[i]!, Math.round(a * 255));
  }
}

/** A cast this strong (largest over smallest gain, less 1) is taken out before the final matte. */
const MATTE_CAST = 0.02;

/**
 * The matte of the photo with its cast taken out. The cut-out tells a backdrop from its shadows
 * and fabric on a neutral backdrop; under a cast it kept a digital backdrop's drop shadow and
 * JPEG blotches as subject (049805_1 and 050181_1 under a white balance 1000 K warmer or cooler:
 * 4.5-7% of the backdrop left grey). Gains scaled so the backdrop's brightest channel keeps its
 * level: a white backdrop comes back white. Plain gains, clipped: this image only decides alpha.
 */
async function balancedMatte(
  data: Buffer,
  width: number,
  height: number,
  gains: readonly number[],
): Promise<Buffer | null> {
  const low = Math.min(...gains);
  if (Math.max(...gains) / low - 1 < MATTE_CAST) return null;
  const lut = gains.map((g) =>
    Uint8Array.from({ length: 256 }, (_, v) => Math.min(255, Math.round((v * g) / low))),
  );
  const balanced = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i++) balanced[i] = lut[i % 3]![data[i]!]!;
  const png = await sharp(balanced, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1, adaptiveFiltering: false })
    .toBuffer();
  return matteAt(await computeMatte(png), width, height);
}

export async function retouchPhoto(input: Buffer): Promise<Buffer> {
  await decodeMeta(input);
  const { data, width, height } = await rgbPixels(input);
  const first = await matteAt(await computeMatte(input), width, height);
  const { gains, clipped } = neutralGains(data, first, width, height);
  const alpha = (await balancedMatte(data, width, height, gains)) ?? first;
  keepOffBackdrop(data, alpha, width, height);
  const backdrop = localBackdrop(data, alpha, width, height);
  regainEdge(data, alpha, backdrop, width, height);
  const out = Buffer.alloc(data.length);
  for (let i = 0; i < width * height; i++) {
    const a = alpha[i]! / 255;
    // An edge pixel already holds backdrop in proportion to 1 - alpha: take it out before
    // blending over white, or the edge is whitened twice (lace fringe, straps and the outline of
    // dark garments came out pale: 048769_1 had 3.7% of its fabric bleached).
    const k = Math.max(a, UNMIX_FLOOR);
    const subject = [0, 0, 0];
    let others = 0;
    let kept = 0;
    for (let c = 0; c < 3; c++) {
      const v = data[i * 3 + c]!;
      const b = backdrop[i * 3 + c]!;
      const fg = a > 0 && a < 1 && b >= 0 ? (v - (1 - k) * b) / k : v;
      subject[c] = withGain(Math.max(0, fg), gains[c]!);
      if (!clipped[c]) ((others += subject[c]!), kept++);
    }
    // A channel the cast clipped held more than 255 here too: its corrected value is a floor.
    // Raised to the mean of the pixel's other channels, clipped white fabric stays white instead
    // of turning the cast's complement (cyan under a pink cast).
    for (let c = 0; c < 3; c++)
      if (clipped[c] && data[i * 3 + c]! >= 254) subject[c] = Math.max(subject[c]!, others / kept);
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(subject[c]! * a + 255 * (1 - a));
  }
  // No sharpening: on prints and knits it moves every pixel's colour (median Delta E 2-6).
  return sharp(out, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 95, chromaSubsampling: '4:4:4' })
    .toBuffer();
}
