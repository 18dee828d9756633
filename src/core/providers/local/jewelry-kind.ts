/**
 * What kind of jewelry a product cut-out shows, when its shape can honestly tell (the jewelry pack
 * takes no jewelryType): a ring is a thick closed band around a hole, about as tall as wide;
 * earrings come as a pair of like pieces side by side; a necklace is a thin chain, a small share
 * of the box it spans. Anything else (a single drop, a thin bangle, a brooch) is not guessed.
 */
import { sharp } from '../../../infra/sharp';
import type { JewelryType } from '../../../shared/api';
import { borderPixels, components, dilate, flood } from './matting/morphology';

export type JewelryShape = {
  /** Pieces as large as a third of the largest (a pair of earrings gives two). */
  pieces: number;
  /** Height over width of the largest piece's box. */
  aspect: number;
  /** Share of that box the piece covers (a chain covers little of the loop it draws). */
  fill: number;
  /** Share of that box the piece encloses without covering (a ring's hole). */
  hole: number;
  /** For a pair: the column between the two pieces. */
  between?: number;
};

const SIDE = 160;
/** A ring's band is thick: an annulus of inner radius 0.75 covers 35% of its box, a chain 5%. */
const RING_FILL = 0.22;
const CHAIN_FILL = 0.12;

/** Shape measures of a mask (1 = the piece) on a w x h grid. */
export function jewelryShape(mask: Uint8Array, w: number, h: number): JewelryShape | null {
  // Chain links and a pendant's bail are joined across a pixel's gap.
  const joined = dilate(mask, w, h, 1);
  const { label, sizes } = components(joined, w);
  if (sizes.length === 0) return null;
  let best = 0;
  for (let k = 1; k < sizes.length; k++) if (sizes[k]! > sizes[best]!) best = k;
  const big = sizes.map((s) => s >= sizes[best]! / 3);
  // Two like pieces side by side (their rows overlap) are a pair; one above the other is not.
  const rows = sizes.map(() => [h, -1]);
  for (let i = 0; i < label.length; i++) {
    const k = label[i]!;
    if (k < 0 || !big[k]) continue;
    const y = (i / w) | 0;
    rows[k]![0] = Math.min(rows[k]![0]!, y);
    rows[k]![1] = Math.max(rows[k]![1]!, y);
  }
  const [t0, b0] = rows[best]!;
  const side: number[] = [];
  for (let k = 0; k < sizes.length; k++)
    if (big[k] && rows[k]![0]! <= b0! && rows[k]![1]! >= t0!) side.push(k);
  const pieces = side.length;
  let between: number | undefined;
  if (pieces === 2) {
    // Rightmost column of the left piece and leftmost of the right one.
    const left = side.map(() => w);
    const right = side.map(() => -1);
    for (let i = 0; i < label.length; i++) {
      const s = side.indexOf(label[i]!);
      if (s < 0) continue;
      left[s] = Math.min(left[s]!, i % w);
      right[s] = Math.max(right[s]!, i % w);
    }
    const [a, b] = left[0]! < left[1]! ? [0, 1] : [1, 0];
    between = Math.round((right[a]! + left[b]!) / 2);
  }
  let minX = w,
    maxX = -1,
    minY = h,
    maxY = -1,
    area = 0;
  for (let i = 0; i < label.length; i++) {
    if (label[i] !== best || !mask[i]) continue;
    const x = i % w;
    const y = (i / w) | 0;
    minX = Math.min(minX, x);
    maxX = Math.max(maxX, x);
    minY = Math.min(minY, y);
    maxY = Math.max(maxY, y);
    area++;
  }
  const bw = maxX - minX + 1;
  const bh = maxY - minY + 1;
  // Enclosed: not reachable from the frame without crossing the piece.
  const outside = new Uint8Array(w * h);
  flood(outside, borderPixels(w, h), w, (j) => label[j] !== best);
  let hole = 0;
  for (let i = 0; i < w * h; i++) if (!outside[i] && label[i] !== best) hole++;
  return { pieces, aspect: bh / bw, fill: area / (bw * bh), hole: hole / (bw * bh), between };
}

/** The jewelry type a shape shows, or null when it cannot be told. */
export function jewelryKindOf(s: JewelryShape): JewelryType | null {
  if (s.pieces === 2) return 'earring';
  if (s.pieces !== 1) return null;
  if (s.hole >= 0.15 && s.fill >= RING_FILL && s.aspect > 0.7 && s.aspect < 1.45) return 'ring';
  if (s.fill < CHAIN_FILL) return 'necklace';
  return null;
}

const PAD = 2;

/** The piece's mask on a small grid, from the cut-out trimmed to its content. */
async function readPiece(cutout: Buffer) {
  // The backdrop colour from the full-size transparent pixels: a ring's hole the cut-out kept is
  // backdrop-coloured, not part of the piece.
  const full = await sharp(cutout).ensureAlpha().raw().toBuffer();
  const backdrop: number[][] = [[], [], []];
  for (let i = 0; i < full.length; i += 4 * 7)
    if (full[i + 3] === 0) for (let c = 0; c < 3; c++) backdrop[c]!.push(full[i + c]!);
  const median = backdrop.map((v) => v.sort((a, b) => a - b)[v.length >> 1] ?? -100);
  const trimmed = await sharp(cutout)
    .trim({ threshold: 1 })
    .png()
    .toBuffer()
    .catch(() => cutout);
  const { data, info } = await sharp(trimmed)
    .ensureAlpha()
    .resize(SIDE, SIDE, { fit: 'inside' })
    .extend({ top: PAD, bottom: PAD, left: PAD, right: PAD, background: '#0000' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    mask[i] =
      data[i * 4 + 3]! > 127 &&
      Math.max(...[0, 1, 2].map((c) => Math.abs(data[i * 4 + c]! - median[c]!))) > 8
        ? 1
        : 0;
  return { trimmed, shape: jewelryShape(mask, info.width, info.height), gridW: info.width };
}

/** The jewelry type in a cut-out (RGBA; transparent pixels keep the photo's backdrop colour). */
export async function jewelryKind(cutout: Buffer): Promise<JewelryType | null> {
  const { shape } = await readPiece(cutout);
  return shape ? jewelryKindOf(shape) : null;
}

/** A pair of earrings as its two pieces, left then right (trimmed); one piece as itself. */
export async function earringPieces(cutout: Buffer): Promise<Buffer[]> {
  const { trimmed, shape, gridW } = await readPiece(cutout);
  if (shape?.between === undefined) return [trimmed];
  const meta = await sharp(trimmed).metadata();
  const cut = Math.round(((shape.between - PAD) * meta.width!) / (gridW - 2 * PAD));
  if (cut < 1 || cut >= meta.width! - 1) return [trimmed];
  const part = (left: number, width: number) =>
    sharp(trimmed).extract({ left, top: 0, width, height: meta.height! }).png().toBuffer();
  return Promise.all([part(0, cut), part(cut, meta.width! - cut)]);
}
