/**
 * model_to_flat_lay needs one garment without the person wearing it. Offline, from a person's
 * cut-out: the face is found as the top skin blob, the garment at the chest below it gives the
 * colours to follow, and the garment is the region grown from the chest through pixels of those
 * colours that are not skin and look more like the garment than like the wall around the figure.
 * That stops at the trousers or skirt under a top (another colour, or bare skin between them), at
 * arms, hair and shoes, and at wall patches a cut-out kept between arm and body; a dress is one
 * region down to its hem. Trousers of nearly the top's colours are cut at the hem, where the
 * region stops covering the clothed rows; prints are holes bounded by the garment (and the neck's
 * skin where they reach the neckline). A garment of skin's colour is told from skin by its pattern
 * (skin is smooth at full size). When little skin shows (a garment photo, a mannequin), the
 * cut-out is the garment already.
 */
import { sharp } from '../../../infra/sharp';
import { clusterColours, labDistance, nearest } from './colour-clusters';
import { borderPixels, boxSum, components, dilate, erode, flood } from './matting/morphology';
import { continuesPastHips, garmentReach } from './garment-continuity';
import { fullSizeMask } from './full-size-mask';
import { dropPatternedSkin, fineTexture } from './fabric-texture';
import { toLab } from './remove-background';
import { ProviderError } from '../types';
import {
  garmentKind,
  kindOf,
  silhouette,
  type GarmentKind,
  type NamedGarment,
} from './garment-kind';

/** Kovac et al.'s RGB skin rule (daylight): simple, and refuses neutral and cool colours. */
export function isSkin(r: number, g: number, b: number): boolean {
  return (
    r > 95 &&
    g > 40 &&
    b > 20 &&
    Math.max(r, g, b) - Math.min(r, g, b) > 15 &&
    Math.abs(r - g) > 15 &&
    r > g &&
    r > b
  );
}

/**
 * A photo whose white point is below this is brightened to it before skin and colours are judged:
 * the skin rule's levels and the Lab distances below were set on photos exposed as shops shoot
 * them, and 20% darker the same photos lost skin and took other garments (model_4 gave its jeans,
 * model_3 half its top, 07966_00 nothing). The white point is the brighter of the figure's highlights (this
 * quantile of its pixels' brightest channel) and the wall the cut-out kept (its median): a dark
 * outfit on dark skin has low highlights, not a dark wall. Brighter photos are left as they are
 * (a white wall is often clipped, so it says nothing of how much brighter).
 */
const WHITE_QUANTILE = 0.99;
const WHITE_POINT = 230;

/** Scales the working colours (in place) so the photo's white point is at least WHITE_POINT. */
function normaliseExposure(rgb: Buffer, alpha: Buffer): void {
  const figure = new Uint32Array(256);
  const wall = new Uint32Array(256);
  let figures = 0;
  let walls = 0;
  for (let i = 0; i < alpha.length; i++) {
    const top = Math.max(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!);
    if (alpha[i]! >= 128) (figure[top]!++, figures++);
    // Pixels a cut-out zeroed carry no wall colour.
    else if (top > 0) (wall[top]!++, walls++);
  }
  const quantile = (counts: Uint32Array, total: number, q: number) => {
    let v = 0;
    for (let seen = 0; v < 255 && seen + counts[v]! < total * q; v++) seen += counts[v]!;
    return v;
  };
  if (figures === 0) return;
  const white = Math.max(
    quantile(figure, figures, WHITE_QUANTILE),
    walls > figures * 0.1 ? quantile(wall, walls, 0.5) : 0,
  );
  if (white >= WHITE_POINT) return;
  const gain = WHITE_POINT / Math.max(1, white);
  for (let i = 0; i < rgb.length; i++) rgb[i] = Math.min(255, Math.round(rgb[i]! * gain));
}

/** Below this share of skin among the cut-out's pixels there is no person to remove. */
const PERSON_SKIN = 0.04;
/** Working long side: garment regions are large; the cut is made again at full size. */
const WORK = 360;
/** Lab distance (lightness weighted 0.6) within which a pixel has one of the garment's colours. */
const SAME_COLOUR = 16;

/** Lab distance to the face's colours within which a pixel is skin. */
const SKIN_TONE = 14;
/** Share of a piece's columns the garment spans for it to be a print (see fillHoles). */
const ENCLOSED = 0.8;
/** Lab distance to the wall beside it within which a pixel of the cut-out is wall. */
const WALL_MATCH = 4;
/** Share of the clothed pixels around a pixel that must have the garment's colours. */
const DENSE = 0.7;
/** Mean Lab change between the bands above and below a row that ends a top (the waist). */
const WAIST_JUMP = 12;
/** Share of a row's clothing a garment covers above its hem, and below it where another starts. */
const FULL_COVER = 0.75;
const LOW_COVER = 0.5;

type Grid = { w: number; h: number };

/**
 * Distance from a pixel to the wall beside it: the mean colour of the transparent pixels in a
 * ring around the figure, on the same side and about the same rows. Patches of wall a cut-out
 * kept (between arm and body, in a shadow) match it closely; a white top on a grey wall does not.
 */
function localWall(
  lab: Float32Array,
  rgb: Buffer,
  fig: Uint8Array,
  { w, h }: Grid,
  cx: number,
): (i: number) => number {
  // Only the wall connected to the frame: holes the cut-out punched in a garment are garment.
  const ring = dilate(fig, w, h, Math.max(3, Math.round(Math.max(w, h) / 60)));
  const outside = new Uint8Array(w * h);
  flood(outside, borderPixels(w, h), w, (j) => !fig[j]);
  for (let i = 0; i < ring.length; i++) ring[i]! &= outside[i]!;
  // Per row and side: sums of L, a, b and a count (pixels the cut-out zeroed carry no colour).
  const sums = new Float64Array(h * 2 * 4);
  for (let i = 0; i < w * h; i++) {
    if (!ring[i] || rgb[i * 3]! + rgb[i * 3 + 1]! + rgb[i * 3 + 2]! === 0) continue;
    const k = (((i / w) | 0) * 2 + (i % w < cx ? 0 : 1)) * 4;
    for (let ch = 0; ch < 3; ch++) sums[k + ch]! += lab[i * 3 + ch]!;
    sums[k + 3]!++;
  }
  const span = Math.max(2, Math.round(h / 40));
  const wall = new Float32Array(h * 2 * 3).fill(NaN);
  for (let y = 0; y < h; y++)
    for (let side = 0; side < 2; side++) {
      const acc = [0, 0, 0, 0];
      for (let yy = Math.max(0, y - span); yy <= Math.min(h - 1, y + span); yy++)
        for (let c = 0; c < 4; c++) acc[c]! += sums[(yy * 2 + side) * 4 + c]!;
      if (acc[3]! >= 3)
        for (let c = 0; c < 3; c++) wall[(y * 2 + side) * 3 + c] = acc[c]! / acc[3]!;
    }
  return (i) => {
    const k = ((i / w) | 0) * 2 + (i % w < cx ? 0 : 1);
    if (Number.isNaN(wall[k * 3]!)) return Infinity;
    return labDistance(lab, i, [wall[k * 3]!, wall[k * 3 + 1]!, wall[k * 3 + 2]!]);
  };
}

/** Mean column of the set pixels on row y (the frame's middle when there are none). */
function centreOf(mask: Uint8Array, { w }: Grid, y: number): number {
  let sx = 0;
  let c = 0;
  for (let x = 0; x < w; x++) if (mask[y * w + x]) ((sx += x), c++);
  return c ? sx / c : w / 2;
}

/**
 * Where a top meets trousers or a skirt of nearly its colours (a white tank over pale jeans), the
 * region's mean colour jumps from one band of rows to the next: cut it there. A dress changes
 * little down its length (a pattern averages out over a band).
 */
function cutAtWaist(region: Uint8Array, lab: Float32Array, { w, h }: Grid, from: number): void {
  const mean: (number[] | null)[] = [];
  for (let y = 0; y < h; y++) {
    const s = [0, 0, 0];
    let c = 0;
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!region[i]) continue;
      for (let ch = 0; ch < 3; ch++) s[ch]! += lab[i * 3 + ch]!;
      c++;
    }
    mean.push(c >= 3 ? s.map((v) => v / c) : null);
  }
  const rows = mean.flatMap((m, y) => (m ? [y] : []));
  if (rows.length < 10) return;
  const band = Math.max(3, Math.round(rows.length * 0.06));
  const avg = (ys: number[]) =>
    [0, 1, 2].map((ch) => ys.reduce((a, y) => a + mean[y]![ch]!, 0) / ys.length);
  let cut = -1;
  let jump = WAIST_JUMP;
  for (let k = band; k + band <= rows.length; k++) {
    if (rows[k]! <= from) continue;
    const above = avg(rows.slice(k - band, k));
    const below = avg(rows.slice(k, k + band));
    const d = Math.hypot(
      (above[0]! - below[0]!) * 0.6,
      above[1]! - below[1]!,
      above[2]! - below[2]!,
    );
    // The first jump, at its peak: the top ends at the first garment below it (a crop top's
    // skirt), however sharp a later edge (the skirt's hem) is.
    if (d > jump) {
      jump = d;
      cut = rows[k]!;
    } else if (cut >= 0) break;
  }
  if (cut >= 0) region.fill(0, cut * w);
}

/**
 * The face: the largest skin blob in the figure's top 30% (below that, a bare neck, shoulders and
 * arms join it into one blob). Its width is read near its top, where only the face is; the chin
 * is taken 1.2 face widths below the blob's top, and the neck's row where the blob ends above it.
 */
function findFace(
  skin: Uint8Array,
  { w }: Grid,
  top: number,
  figH: number,
): { chin: number; neck: number; width: number; cx: number; pixels: number[] } | null {
  const upper = Uint8Array.from(skin);
  upper.fill(0, (top + Math.round(figH * 0.3)) * w);
  const { label, sizes } = components(upper, w);
  let best = -1;
  for (let k = 0; k < sizes.length; k++) if (best < 0 || sizes[k]! > sizes[best]!) best = k;
  if (best < 0 || sizes[best]! < figH * 0.5) return null;
  let y0 = -1;
  for (let i = 0; i < label.length && y0 < 0; i++) if (label[i] === best) y0 = (i / w) | 0;
  let width = 0;
  let cx = 0;
  for (let y = y0; y <= y0 + Math.max(2, Math.round(figH * 0.06)); y++) {
    let l = -1;
    let r = -1;
    for (let x = 0; x < w; x++) if (label[y * w + x] === best) ((l = l < 0 ? x : l), (r = x));
    if (l >= 0 && r - l + 1 > width) {
      width = r - l + 1;
      cx = (l + r) / 2;
    }
  }
  const chin = y0 + Math.round(width * 1.2);
  const pixels: number[] = [];
  for (let i = 0; i < Math.min(label.length, chin * w); i++) if (label[i] === best) pixels.push(i);
  // A face the frame cuts (VITON-style crops at the eyes) is shorter than its width says, and a
  // crew neck or a tee's collar starts above that chin: where the blob of face and neck ends.
  const neck = Math.min(chin, (label.lastIndexOf(best) / w) | 0);
  return { chin, neck, width, cx, pixels };
}

/** A garment found on the person: its pixels on the working grid and its colours (Lab). */
type Garment = { mask: Uint8Array; colours: number[][] };

/** What the person photo holds, on the working grid. */
type Scene = Grid & {
  n: number;
  fig: Uint8Array;
  skin: Uint8Array;
  lab: Float32Array;
  wallAt: (i: number) => number;
  /** The chin's row: where the body's parts are measured from. */
  chin: number;
  /** Rows at or above it are head and neck, never garment: the chin, or higher where the face's
   * and neck's skin ends above it (a collar). */
  neck: number;
  /** About a face's height: the scale of the body parts. */
  unit: number;
  cx: number;
  bottom: number;
  opaque: number;
};

/**
 * Seeds for a garment: the first band at or below row `from`, across the body's axis (under the
 * face: a wall shadow the cut-out kept beside the legs does not pull it aside), that is
 * mostly clothed (a low neckline or a bare midriff shows skin; `taken` is another garment).
 */
function clothedBand(scene: Scene, from: number, taken: Uint8Array | null): number[] {
  const { w, fig, skin, unit, bottom, cx } = scene;
  const x0 = Math.max(0, Math.round(cx - unit * 0.7));
  const x1 = Math.min(w - 1, Math.round(cx + unit * 0.7));
  for (let step = 0; step <= 6; step++) {
    const y0 = Math.round(from + unit * step * 0.4);
    const y1 = Math.min(bottom, Math.round(y0 + unit));
    if (y0 > y1) break;
    const band: number[] = [];
    for (let y = y0; y <= y1; y++)
      for (let x = x0; x <= x1; x++) {
        const i = y * w + x;
        if (fig[i] && !skin[i] && !taken?.[i]) band.push(i);
      }
    if (band.length >= (y1 - y0 + 1) * (x1 - x0 + 1) * 0.4) return band;
  }
  return [];
}

/**
 * Fills the holes of a garment region: pieces of the figure that are neither garment-coloured,
 * skin nor wall, and that the garment bounds at least twice as much as skin and the outside
 * together. A print is bounded by its garment even where it reaches the neckline (skin) or a
 * fold at the armpit opens it to the wall; trousers below a top lie along the wall and the frame;
 * a shaded strip of arm lies along skin as much as along the garment; a face's eyes lie in skin.
 */
function fillHoles(region: Uint8Array, scene: Scene): void {
  const { w, h, n, fig, skin, wallAt } = scene;
  const open = new Uint8Array(n);
  for (let i = 0; i < n; i++) open[i] = fig[i] && !region[i] && !skin[i] ? 1 : 0;
  const { label, sizes } = components(open, w);
  const toRegion = new Float64Array(sizes.length);
  const toSkin = new Float64Array(sizes.length);
  const wallish = new Float64Array(sizes.length);
  const toOut = new Float64Array(sizes.length);
  for (let i = 0; i < n; i++) {
    const k = label[i]!;
    if (k < 0) continue;
    if (wallAt(i) < WALL_MATCH) wallish[k]!++;
    const x = i % w;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i - w, i + w]) {
      if (j < 0 || j >= n || !fig[j]) toOut[k]!++;
      else if (region[j]) toRegion[k]!++;
      else if (skin[j]) toSkin[k]!++;
    }
  }
  // Only within the garment's outline on its row (a shaded strip of arm joined to a print runs
  // down the garment's side, outside it), or spanned by the garment above and below: a print
  // that runs out to a sleeve's edge (051962_0's red V) is outside the row's outline; an arm's
  // shaded strip lies along the arm's skin.
  const first = new Int32Array(h).fill(w);
  const last = new Int32Array(h).fill(-1);
  for (let i = 0; i < n; i++)
    if (region[i]) {
      const y = (i / w) | 0;
      first[y] = Math.min(first[y]!, i % w);
      last[y] = Math.max(last[y]!, i % w);
    }
  const between = enclosedInColumns(region, label, sizes.length, { w, h });
  for (let i = 0; i < n; i++) {
    const k = label[i]!;
    const y = (i / w) | 0;
    if (
      k >= 0 &&
      toRegion[k]! >= 2 * (toSkin[k]! + toOut[k]!) &&
      wallish[k]! < sizes[k]! / 2 &&
      ((i % w > first[y]! && i % w < last[y]!) ||
        (between[k]! >= ENCLOSED && toSkin[k]! * 4 < toRegion[k]!))
    )
      region[i] = 1;
  }
  // What the region encloses on its own (shading that left the colours) is garment too.
  const outside = new Uint8Array(n);
  flood(outside, borderPixels(w, h), w, (j) => !region[j]);
  for (let i = 0; i < n; i++) if (!outside[i] && fig[i]) region[i] = 1;
}

/**
 * For each labelled piece, the share of its columns in which the region lies both above and below
 * it: a print is spanned by its garment; trousers below a top, or an arm beside it, are not.
 */
function enclosedInColumns(
  region: Uint8Array,
  label: Int32Array,
  pieces: number,
  { w, h }: Grid,
): Float64Array {
  const columns = new Float64Array(pieces);
  const spanned = new Float64Array(pieces);
  const top = new Int32Array(pieces);
  const bottom = new Int32Array(pieces);
  for (let x = 0; x < w; x++) {
    top.fill(-1);
    bottom.fill(-1);
    let firstRegion = h;
    let lastRegion = -1;
    for (let y = 0; y < h; y++) {
      const i = y * w + x;
      if (region[i]) ((firstRegion = Math.min(firstRegion, y)), (lastRegion = y));
      const k = label[i]!;
      if (k < 0) continue;
      if (top[k]! < 0) top[k] = y;
      bottom[k] = y;
    }
    for (let k = 0; k < pieces; k++) {
      if (top[k]! < 0) continue;
      columns[k]!++;
      if (firstRegion < top[k]! && lastRegion > bottom[k]!) spanned[k]!++;
    }
  }
  return columns.map((c, k) => (c ? spanned[k]! / c : 0));
}

/**
 * A top ends where it stops covering the clothed body: below the hem, trousers of nearly its
 * colours (pale jeans under a white tank, grey jeans under black) pass the colour test in places
 * only, so the region covers a row of clothing fully down to the hem and then only partly. Hair
 * on the shoulders (clothed-looking pixels joined to the head) is not counted as clothing.
 */
function cutWhereCoverageDrops(region: Uint8Array, scene: Scene, from: number): void {
  const { w, h, n, fig, skin, chin, wallAt } = scene;
  const other = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    other[i] = fig[i] && !skin[i] && !region[i] && wallAt(i) >= WALL_MATCH ? 1 : 0;
  const head = new Uint8Array(n);
  const seeds: number[] = [];
  for (let i = 0; i < Math.min(n, (chin + 1) * w); i++) if (other[i]) seeds.push(i);
  flood(head, seeds, w, (j) => other[j] === 1);
  const cov = new Float64Array(h).fill(NaN);
  for (let y = 0; y < h; y++) {
    let r = 0;
    let o = 0;
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (region[i]) r++;
      else if (other[i] && !head[i]) o++;
    }
    if (r + o >= 3) cov[y] = r / (r + o);
  }
  // The hem: the first band of rows where other clothing is most of what is worn and stays so
  // down to the feet (a print, a bag or a hand at the waist is passed, the garment resumes below
  // it), then up through the rows where the region thins out into it.
  const band = Math.max(3, Math.round(scene.unit * 0.25));
  const banded = new Float64Array(h).fill(NaN);
  for (let y = from; y + band <= h; y++) {
    let sum = 0;
    let defined = 0;
    for (let k = 0; k < band; k++)
      if (!Number.isNaN(cov[y + k]!)) ((sum += cov[y + k]!), defined++);
    // Rows of bare legs or of nothing are not another garment: a dress's hem is not a cut.
    if (defined >= band * 0.6) banded[y] = sum / defined;
  }
  let hem = -1;
  for (let y = h - 1; y >= from; y--) {
    if (banded[y]! >= FULL_COVER) break;
    if (banded[y]! < LOW_COVER) hem = y;
  }
  if (hem < 0) return;
  while (hem > from && cov[hem - 1]! < FULL_COVER) hem--;
  // Below it, what lies across the other garment is that garment.
  for (let y = hem; y < h; y++) {
    let l = -1;
    let r = -1;
    for (let x = 0; x < w; x++)
      if (other[y * w + x] && !head[y * w + x]) ((l = l < 0 ? x : l), (r = x));
    if (l >= 0) region.fill(0, y * w + l, y * w + r + 1);
  }
  // Pieces left at its side are a sleeve when they hang in the open (the wall beside them), the
  // other garment's edge when they lie against it more than against the wall.
  const below = new Uint8Array(n);
  for (let i = hem * w; i < n; i++) below[i] = region[i]!;
  const { label, sizes } = components(below, w);
  const toOther = new Float64Array(sizes.length);
  const toWall = new Float64Array(sizes.length);
  for (let i = hem * w; i < n; i++) {
    const k = label[i]!;
    if (k < 0) continue;
    const x = i % w;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i - w, i + w]) {
      if (j < hem * w || j >= n) continue;
      if (!fig[j]) toWall[k]!++;
      else if (other[j]) toOther[k]!++;
    }
  }
  for (let i = hem * w; i < n; i++) {
    const k = label[i]!;
    if (k >= 0 && toOther[k]! > toWall[k]!) region[i] = 0;
  }
}

/**
 * Grows one garment from its seed pixels through pixels of the seeds' colours that are not skin,
 * look more like the garment than like the wall beside them, and are dense in those colours; the
 * pixels `taken` (another garment) are out. Thin links are cut and the largest piece kept. A top
 * is cut at the waist where the colours change or another garment starts; a dress (`dress`, seeded
 * down its length) is not.
 */
function grow(scene: Scene, seeds: number[], above: Garment | null, dress = false): Garment | null {
  const { w, h, n, fig, skin, lab, wallAt, chin, neck, unit } = scene;
  const isTop = above === null && !dress;
  const taken = above?.mask;
  // A bottom's band can start on the top's last rows (left out at its hem): a colour of the top
  // that the band's lower half does not have is the top's.
  const found = clusterColours(lab, seeds, 4, 0.1);
  const rows = seeds.map((i) => (i / w) | 0);
  const mid = (Math.min(...rows) + Math.max(...rows)) / 2;
  const lowerHalf = seeds.filter((_, k) => rows[k]! > mid);
  const inLower = found.map(() => 0);
  for (const i of lowerHalf) {
    let best = 0;
    for (let c = 1; c < found.length; c++)
      if (labDistance(lab, i, found[c]!) < labDistance(lab, i, found[best]!)) best = c;
    inLower[best]!++;
  }
  const own = found.filter(
    (c, k) =>
      !above ||
      inLower[k]! >= lowerHalf.length * 0.05 ||
      above.colours.every((a) => labDistance(new Float32Array(c), 0, a) >= SAME_COLOUR),
  );
  const garment = own.length ? own : found;
  const colour = new Float32Array(n);
  const clothed = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (!fig[i] || skin[i] || taken?.[i] || ((i / w) | 0) <= neck) continue;
    clothed[i] = 1;
    const d = nearest(lab, i, garment);
    if (d < SAME_COLOUR && d < wallAt(i)) colour[i] = 1;
  }
  // Dense in the garment's colours: a zebra skirt or a print shares one colour with a plain top
  // but only every other stripe.
  const rr = Math.max(2, Math.round(Math.max(w, h) / 90));
  const near = boxSum(colour, w, h, rr);
  const all = boxSum(clothed, w, h, rr);
  const allowed = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (colour[i] && near[i]! >= all[i]! * DENSE) allowed[i] = 1;
  // A crease or a seam in shade (a dark line a few pixels wide) parts a sleeve from the body in
  // the colour test; the flood crosses such lines between garment colours, never skin or wall.
  const gap = Math.max(1, Math.round(Math.max(w, h) / 180));
  const closed = erode(dilate(allowed, w, h, gap), w, h, gap);
  const passable = (j: number) =>
    allowed[j] === 1 ||
    (closed[j] === 1 && fig[j] === 1 && !skin[j] && !taken?.[j] && ((j / w) | 0) > neck);
  const region = new Uint8Array(n);
  flood(
    region,
    seeds.filter((i) => allowed[i]),
    w,
    passable,
  );
  const seedTop = Math.min(...seeds.map((i) => (i / w) | 0));
  // The waist lies below the chest the seeds were taken from: a jump above their middle row is the
  // neckline (a shaded neck left out of skin once cut model_7's vest down to a strip of neck).
  const seedMiddle = [...rows].sort((a, b) => a - b)[rows.length >> 1]!;
  if (isTop) cutAtWaist(region, lab, scene, Math.max(Math.round(chin + unit), seedMiddle));
  fillHoles(region, scene);
  if (taken) for (let i = 0; i < n; i++) if (taken[i]) region[i] = 0;
  if (isTop) cutWhereCoverageDrops(region, scene, seedTop);
  // Cut the thin links (a strap of the same colour, a hand on the hip) and keep the largest piece
  // of those the seeds lie in (a quarter as many as the most seeded one holds, or more): the
  // largest of all was the black trousers under a black crop top once shaded skin at the
  // midriff's side joined them (14627_00 2.5% darker); a skirt's waistband holds many seeds too.
  const r = Math.max(1, Math.round(Math.max(w, h) / 150));
  const opened = dilate(erode(region, w, h, r), w, h, r);
  for (let i = 0; i < n; i++) opened[i]! &= region[i]!;
  const { label, sizes } = components(opened, w);
  const seeded = new Float64Array(sizes.length);
  for (const i of seeds) if (label[i]! >= 0) seeded[label[i]!]!++;
  const mostSeeded = Math.max(0, ...seeded);
  let best = -1;
  for (let k = 0; k < sizes.length; k++)
    if (seeded[k]! >= mostSeeded * 0.25 && (best < 0 || sizes[k]! > sizes[best]!)) best = k;
  if (best < 0 || sizes[best]! < scene.opaque * 0.05) return null;
  const keep = new Uint8Array(n);
  for (let i = 0; i < n; i++) keep[i] = label[i] === best ? 1 : 0;
  return { mask: keep, colours: garment };
}

/** The clothed pixels under the body's axis from the chest band's last row down to row `to`. */
function axisBelow(scene: Scene, chest: number[], to: number): number[] {
  const { w, fig, skin, unit, cx } = scene;
  const from = Math.max(...chest.map((i) => (i / w) | 0)) + 1;
  const x0 = Math.max(0, Math.round(cx - unit * 0.5));
  const x1 = Math.min(w - 1, Math.round(cx + unit * 0.5));
  const out: number[] = [];
  for (let y = from; y <= to; y++)
    for (let x = x0; x <= x1; x++) if (fig[y * w + x] && !skin[y * w + x]) out.push(y * w + x);
  return out;
}

const KIND_NAME: Record<GarmentKind, string> = {
  top: 'top',
  bottom: 'bottom garment (trousers, jeans, a skirt)',
  dress: 'dress',
};

/** The flat lay cannot be made honestly: the job fails with this reason (and is refunded). */
const cannot = (why: string) => new ProviderError(`model_to_flat_lay: ${why}`);

/**
 * The garment (RGBA cut-out, the rest transparent) worn in a person's cut-out: the one `want`
 * names (a bottom: the trousers or skirt below the top; a dress; a top), else the garment at the
 * chest. Throws a ProviderError with the reason when that garment is not there to take.
 */
export async function garmentFromPerson(cutout: Buffer, want?: NamedGarment): Promise<Buffer> {
  const full = await sharp(cutout).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width: W, height: H } = full.info;
  const scale = Math.min(1, WORK / Math.max(W, H));
  const w = Math.max(1, Math.round(W * scale));
  const h = Math.max(1, Math.round(H * scale));
  const grid = { w, h };
  // Colour from raw RGB: resizing the PNG, even after removeAlpha, premultiplies the transparent
  // backdrop to black, and the wall beside the figure is needed.
  const colourOnly = Buffer.alloc(W * H * 3);
  for (let i = 0; i < W * H; i++)
    for (let c = 0; c < 3; c++) colourOnly[i * 3 + c] = full.data[i * 4 + c]!;
  const rgb = await sharp(colourOnly, { raw: { width: W, height: H, channels: 3 } })
    .resize(w, h, { fit: 'fill' })
    .raw()
    .toBuffer();
  const alpha = await sharp(cutout)
    .ensureAlpha()
    .extractChannel(3)
    .resize(w, h, { fit: 'fill' })
    .raw()
    .toBuffer();
  const n = w * h;
  normaliseExposure(rgb, alpha);
  const fig = new Uint8Array(n);
  const skin = new Uint8Array(n);
  let opaque = 0;
  let skinCount = 0;
  let top = h;
  let bottom = -1;
  for (let i = 0; i < n; i++) {
    if (alpha[i]! < 128) continue;
    fig[i] = 1;
    opaque++;
    const y = (i / w) | 0;
    top = Math.min(top, y);
    bottom = Math.max(bottom, y);
    if (isSkin(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!)) {
      skin[i] = 1;
      skinCount++;
    }
  }
  if (opaque === 0) throw cannot('the photo has no subject to lay flat');
  if (skinCount < opaque * PERSON_SKIN) {
    // No person: the cut-out is the garment already, if it is the one asked for.
    const kind = want ? await garmentKind(cutout) : undefined;
    if (want && kind !== want.kind)
      throw cannot(`the photo shows a ${KIND_NAME[kind!]}, not the ${want.word} the request names`);
    return cutout;
  }
  const figH = bottom - top + 1;
  const lab = toLab({ data: rgb, width: w, height: h, channels: 3 });
  // Wall the cut-out kept (between arm and body, beside the hair) is not skin, though a beige
  // wall passes the RGB rule and could take the face's place. (White fabric on a white wall can
  // be as close to it, so only skin is judged this way.)
  let sx = 0;
  for (let i = 0; i < n; i++) if (fig[i]) sx += i % w;
  const wallAt = localWall(lab, rgb, fig, grid, sx / opaque);
  const wallLike = (i: number) => wallAt(i) < WALL_MATCH;
  for (let i = 0; i < n; i++) if (skin[i] && wallLike(i)) skin[i] = 0;

  // Skin is what looks like the face: the RGB rule alone also takes red and orange fabric, and
  // misses dark skin.
  const face = findFace(skin, grid, top, figH);
  if (face) {
    const tone = clusterColours(lab, face.pixels, 2, 0.2);
    for (let i = 0; i < n; i++)
      skin[i] = fig[i] && nearest(lab, i, tone) < SKIN_TONE && !wallLike(i) ? 1 : 0;
  }
  const chin = face ? face.chin : top + Math.round(figH * 0.12);
  const unit = face ? face.width * 1.3 : figH * 0.1;
  const cx = face?.cx ?? centreOf(fig, grid, Math.min(bottom, chin + Math.round(unit)));
  // A garment of skin's colour passed the tone test: its pattern tells it apart.
  if (face) dropPatternedSkin(skin, await fineTexture(cutout, w, h), face.pixels, { w, h, unit });
  const neck = face ? face.neck : chin;
  const scene: Scene = { w, h, n, fig, skin, lab, wallAt, chin, neck, unit, cx, bottom, opaque };
  // Chest: the first band below the chin that is mostly clothed (a low neckline shows skin).
  const chest = clothedBand(scene, Math.round(chin + unit * 0.6), null);
  const upperGarment = chest.length >= 30 ? grow(scene, chest, null) : null;
  if (!upperGarment) throw cannot('no garment could be told apart from the person in this photo');
  const upper = upperGarment.mask;
  // A dress: long for its body (as garmentKind measures a product photo), or with legs and no
  // other garment below it (a sequined dress with long sleeves measures wide for its length).
  // Its hem is read under the body's axis: sleeves and hands hang lower at the sides.
  let lowest = 0;
  for (let i = 0; i < n; i++)
    if (upper[i] && Math.abs((i % w) - cx) <= unit * 0.7) lowest = (i / w) | 0;
  const below = clothedBand(scene, lowest + 1, upper);
  const shape = silhouette(upper, w, h);
  const body = { w, fig, skin, wallLike, lab, chin, unit, cx, bottom };
  // A dress the top's waist cuts took for a top: its colours carry on past the hips (a sequined
  // dress, a dress with a ribbon above its flounce). It is grown again, seeded down its length.
  const reach = garmentReach(body, upperGarment.colours);
  const dress = continuesPastHips(body, reach)
    ? grow(scene, [...chest, ...axisBelow(scene, chest, reach.row)], null, true)
    : null;
  const upperKind: GarmentKind =
    dress ||
    (shape && kindOf(shape) === 'dress') ||
    (below.length < 30 && bottom - lowest > unit * 1.5)
      ? 'dress'
      : 'top';
  let region = dress?.mask ?? upper;
  if (want && (want.kind === 'bottom' ? upperKind === 'dress' : want.kind !== upperKind))
    throw cannot(
      `the ${want.word} the request names is not in the photo: the person wears a ${upperKind === 'dress' ? 'dress' : 'top that ends at the waist'}`,
    );
  if (want?.kind === 'bottom') {
    // The bottom garment: seeded in the first clothed band below the top's hem.
    const lower = below.length >= 30 ? grow(scene, below, upperGarment) : null;
    if (!lower) throw cannot(`found no ${want.word} below the top in this photo`);
    region = lower.mask;
  }
  // Cut at full size along a smooth outline (scaled up as it is, the working grid shows as steps).
  const soft = await fullSizeMask(region, fig, w, h, W, H);
  const out = Buffer.from(full.data);
  for (let i = 0; i < W * H; i++) out[i * 4 + 3] = Math.round((out[i * 4 + 3]! * soft[i]!) / 255);
  return sharp(out, { raw: { width: W, height: H, channels: 4 } })
    .png()
    .toBuffer();
}
