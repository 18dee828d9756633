/**
 * Skin is smooth at full size; woven and printed fabric is not. A garment of skin's colour (a
 * beige houndstooth dress) passes every colour test for skin, but its fine pattern shows in the
 * luminance's detail: each pixel's distance from the mean of its 3x3 neighbours.
 */
import { components, dilate, erode } from './matting/morphology';

/**
 * Mean fine detail (levels) of the full-size RGBA image in each cell of the w x h working grid,
 * over the pixels whose 3x3 neighbourhood is opaque (the cut-out's own edge is not texture);
 * NaN for a cell with none.
 */
export function fineTexture(
  rgba: Buffer,
  W: number,
  H: number,
  w: number,
  h: number,
): Float32Array {
  const L = new Float32Array(W * H);
  for (let i = 0; i < W * H; i++)
    L[i] = 0.299 * rgba[i * 4]! + 0.587 * rgba[i * 4 + 1]! + 0.114 * rgba[i * 4 + 2]!;
  const sum = new Float64Array(w * h);
  const count = new Float64Array(w * h);
  for (let y = 1; y < H - 1; y++) {
    const cy = Math.min(h - 1, Math.floor((y * h) / H));
    for (let x = 1; x < W - 1; x++) {
      let opaque = true;
      let s = 0;
      for (let dy = -1; dy <= 1 && opaque; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const j = (y + dy) * W + x + dx;
          if (rgba[j * 4 + 3]! < 250) {
            opaque = false;
            break;
          }
          s += L[j]!;
        }
      if (!opaque) continue;
      const k = cy * w + Math.min(w - 1, Math.floor((x * w) / W));
      sum[k]! += Math.abs(L[y * W + x]! - s / 9);
      count[k]!++;
    }
  }
  const out = new Float32Array(w * h);
  for (let k = 0; k < w * h; k++) out[k] = count[k] ? sum[k]! / count[k]! : NaN;
  return out;
}

/** Fine detail (levels) above which a cell is patterned, at least: smooth skin has about 1. */
const PATTERNED = 8;
/** ...and at least this many times the face's own median (a noisy photo roughens skin too). */
const OVER_FACE = 4;

/**
 * Takes wide patterned areas out of `skin` (in place): a skin-coloured garment. A patterned area
 * counts when it is at least a fifth of a face wide everywhere (the edges of arms and fingers, eyes
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
  const r = Math.max(1, Math.round(unit * 0.1));
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
