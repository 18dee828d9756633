/**
 * model_to_flat_lay needs one garment without the person wearing it. Offline, from a person's
 * cut-out: the face is found as the top skin blob, the garment at the chest below it gives the
 * colours to follow, and the garment is the region grown from the chest through pixels of those
 * colours that are not skin and look more like the garment than like the wall around the figure.
 * That stops at the trousers or skirt under a top (another colour, or bare skin between them), at
 * arms, hair and shoes, and at wall patches a cut-out kept between arm and body; a dress is one
 * region down to its hem. When little skin shows (a garment photo, a mannequin), the cut-out is
 * the garment already.
 */
import { sharp } from '../../../infra/sharp';
import { clusterColours, labDistance, nearest } from './colour-clusters';
import { borderPixels, boxSum, components, dilate, erode, flood } from './matting/morphology';
import { toLab } from './remove-background';

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

/** Below this share of skin among the cut-out's pixels there is no person to remove. */
const PERSON_SKIN = 0.04;
/** Working long side: garment regions are large, and the mask is scaled back up softly. */
const WORK = 360;
/** Lab distance (lightness weighted 0.6) within which a pixel has one of the garment's colours. */
const SAME_COLOUR = 16;

/** Lab distance to the face's colours within which a pixel is skin. */
const SKIN_TONE = 14;
/** Lab distance to the wall beside it within which a pixel of the cut-out is wall. */
const WALL_MATCH = 4;
/** Share of the clothed pixels around a pixel that must have the garment's colours. */
const DENSE = 0.7;
/** Mean Lab change between the bands above and below a row that ends a top (the waist). */
const WAIST_JUMP = 12;

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
    if (d > jump) {
      jump = d;
      cut = rows[k]!;
    }
  }
  if (cut >= 0) region.fill(0, cut * w);
}

/**
 * The face: the largest skin blob in the figure's top 30% (below that, a bare neck, shoulders and
 * arms join it into one blob). Its width is read near its top, where only the face is; the chin
 * is taken 1.2 face widths below the blob's top.
 */
function findFace(
  skin: Uint8Array,
  { w }: Grid,
  top: number,
  figH: number,
): { chin: number; width: number; cx: number; pixels: number[] } | null {
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
  return { chin, width, cx, pixels };
}

export async function garmentFromPerson(cutout: Buffer): Promise<Buffer> {
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
  if (opaque === 0 || skinCount < opaque * PERSON_SKIN) return cutout;
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
  // Chest: the first band below the chin that is mostly clothed (a low neckline shows skin).
  const chin = face ? face.chin : top + Math.round(figH * 0.12);
  const unit = face ? face.width * 1.3 : figH * 0.1;
  const cx = face?.cx ?? centreOf(fig, grid, Math.min(bottom, chin + Math.round(unit)));
  const x0 = Math.max(0, Math.round(cx - unit * 0.7));
  const x1 = Math.min(w - 1, Math.round(cx + unit * 0.7));
  let chest: number[] = [];
  for (let step = 0; step <= 6 && chest.length === 0; step++) {
    const y0 = Math.round(chin + unit * (0.6 + step * 0.4));
    const y1 = Math.min(bottom, Math.round(y0 + unit));
    const band: number[] = [];
    for (let y = y0; y <= y1; y++)
      for (let x = x0; x <= x1; x++) if (fig[y * w + x] && !skin[y * w + x]) band.push(y * w + x);
    if (band.length >= (y1 - y0 + 1) * (x1 - x0 + 1) * 0.4) chest = band;
  }
  if (chest.length < 30) return cutout;
  const garment = clusterColours(lab, chest, 4, 0.1);

  const colour = new Float32Array(n);
  const clothed = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (!fig[i] || skin[i] || ((i / w) | 0) <= chin) continue;
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
  const region = new Uint8Array(n);
  flood(
    region,
    chest.filter((i) => allowed[i]),
    w,
    (j) => allowed[j] === 1,
  );
  cutAtWaist(region, lab, grid, Math.round(chin + unit));
  // Prints and shading inside the garment that left the colours: holes the region encloses.
  const outside = new Uint8Array(n);
  flood(outside, borderPixels(w, h), w, (j) => !region[j]);
  for (let i = 0; i < n; i++) if (!outside[i] && fig[i]) region[i] = 1;
  // Cut the thin links (a strap of the same colour, a hand on the hip) and keep the largest piece.
  const r = Math.max(1, Math.round(Math.max(w, h) / 150));
  const opened = dilate(erode(region, w, h, r), w, h, r);
  for (let i = 0; i < n; i++) opened[i]! &= region[i]!;
  const { label, sizes } = components(opened, w);
  let best = -1;
  for (let k = 0; k < sizes.length; k++) if (best < 0 || sizes[k]! > sizes[best]!) best = k;
  if (best < 0 || sizes[best]! < opaque * 0.05) return cutout;
  const keep = Buffer.alloc(n);
  for (let i = 0; i < n; i++) keep[i] = label[i] === best ? 255 : 0;
  // Back to full size with a soft edge where the garment meets skin or another garment.
  const soft = await sharp(keep, { raw: { width: w, height: h, channels: 1 } })
    .resize(W, H, { fit: 'fill', kernel: 'linear' })
    .extractChannel(0) // one-channel raw input comes back as three channels
    .raw()
    .toBuffer();
  const out = Buffer.from(full.data);
  for (let i = 0; i < W * H; i++) out[i * 4 + 3] = Math.round((out[i * 4 + 3]! * soft[i]!) / 255);
  return sharp(out, { raw: { width: W, height: H, channels: 4 } })
    .png()
    .toBuffer();
}
