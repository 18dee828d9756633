/**
 * Skin is smooth at full size; woven and printed fabric is not. A garment of skin's colour (a
 * beige houndstooth dress) passes every colour test for skin, but its fine pattern shows in the
 * luminance's detail: each pixel's distance from the mean of its 3x3 neighbours.
 */
import { sharp } from '../../../infra/sharp';
import { components, dilate, erode } from './matting/morphology';

/** Long side the detail is read at: larger photos are reduced first (the cost grows with area). */
const READ_AT = 1536;

/**
 * Mean fine detail (levels) of a cut-out (RGBA) in each cell of the w x h working grid, over the
 * pixels whose 3x3 neighbourhood is opaque (the cut-out's own edge is not texture); NaN for a
 * cell with none.
 */
export async function fineTexture(cutout: Buffer, w: number, h: number): Promise<Float32Array> {
  const meta = await sharp(cutout).metadata();
  const k = Math.min(1, READ_AT / Math.max(meta.width!, meta.height!));
  const { data, info } = await sharp(cutout)
    .ensureAlpha()
    .resize(Math.round(meta.width! * k), Math.round(meta.height! * k), { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width: W, height: H } = info;
  const n = W * H;
  const L = new Float32Array(n);
  const opaque = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    L[i] = 0.299 * data[i * 4]! + 0.587 * data[i * 4 + 1]! + 0.114 * data[i * 4 + 2]!;
    opaque[i] = data[i * 4 + 3]! >= 250 ? 1 : 0;
  }
  // 3x3 sums and all-opaque tests, separably: along rows, then down columns.
  const rowSum = new Float32Array(n);
  const rowOpaque = new Uint8Array(n);
  for (let y = 0; y < H; y++)
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x;
      rowSum[i] = L[i - 1]! + L[i]! + L[i + 1]!;
      rowOpaque[i] = opaque[i - 1]! & opaque[i]! & opaque[i + 1]!;
    }
  const sum = new Float64Array(w * h);
  const count = new Float64Array(w * h);
  for (let y = 1; y < H - 1; y++) {
    const row = Math.min(h - 1, Math.floor((y * h) / H)) * w;
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x;
      if (!(rowOpaque[i - W]! & rowOpaque[i]! & rowOpaque[i + W]!)) continue;
      const mean = (rowSum[i - W]! + rowSum[i]! + rowSum[i + W]!) / 9;
      const cell = row + Math.min(w - 1, Math.floor((x * w) / W));
      sum[cell]! += Math.abs(L[i]! - mean);
      count[cell]!++;
    }
  }
  const out = new Float32Array(w * h);
  for (let c = 0; c < w * h; c++) out[c] = count[c] ? sum[c]! / count[c]! : NaN;
  return out;
}

/** Fine detail (levels) above which a cell is patterned, at least: smooth skin has about 1. */
const PATTERNED = 8;
/** ...and at least this many times the face's own median (a noisy photo roughens skin too). */
const OVER_FACE = 4;

/**
 * Takes wide patterned areas out of `skin` (in place): a skin-coloured garment. A patterned area
 * counts when it is at least a tenth of a face wide everywhere (the edges of arms and fingers, eyes
 * and lips are lines and specks) and covers at least half a face's area. Returns how many pixels
 * it took.
 */
export function dropPatternedSkin(
  skin: Uint8Array,
  texture: Float32Array,
  face: readonly number[],
  { w, h, unit }: { w: number; h: number; unit: number },
): number {
  const n = w * h;
  const onFace = face.map((i) => texture[i]!).filter((v) => !Number.isNaN(v));
  onFace.sort((a, b) => a - b);
  const level = Math.max(PATTERNED, OVER_FACE * (onFace[onFace.length >> 1] ?? 0));
  const patterned = new Uint8Array(n);
  for (let i = 0; i < n; i++) patterned[i] = skin[i] && texture[i]! > level ? 1 : 0;
  // Close the smooth specks a pattern leaves, then keep only what is wide.
  const closed = erode(dilate(patterned, w, h, 1), w, h, 1);
  const r = Math.max(1, Math.round(unit * 0.05));
  const wide = dilate(erode(closed, w, h, r), w, h, r);
  for (let i = 0; i < n; i++) wide[i]! &= closed[i]!;
  const { label, sizes } = components(wide, w);
  let taken = 0;
  for (let i = 0; i < n; i++) {
    const k = label[i]!;
    if (k >= 0 && sizes[k]! >= unit * unit * 0.5 && skin[i]) {
      skin[i] = 0;
      taken++;
    }
  }
  return taken;
}
