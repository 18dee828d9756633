/**
 * Background purity of a white-background export, measured over the whole background rather than
 * border samples. The product is every pixel that is not white, less what is backdrop left behind:
 *  - residue: neutral, smooth grey reached from the white background through neutral smooth grey
 *    (a kept floor shadow, a strip of old backdrop along a cut-out's edge);
 *  - specks: small islands far smaller than the product (dust, cut-out fragments).
 * Everything else is background and must be pure white; a 3 px ring around the product is left
 * out (antialiasing and JPEG ringing belong to the edge). A backdrop that is not white (an
 * off-white sweep) is found from the frame's border and counts as impure background.
 */
import {
  DEFAULT_TOLERANCE,
  estimateBackground,
  isBackgroundPixel,
  type RawImage,
} from './product-bbox';

/** A channel at or above this counts as white: 255 give or take JPEG ringing, invisible on a page. */
export const WHITE_FLOOR = 250;
/** Largest share of impure background pixels an upload may carry. */
export const MAX_IMPURE_SHARE = 0.0005;

export type Region = { left: number; top: number; width: number; height: number; pixels: number };

export type PurityReport = {
  /** Background pixels counted (the ring around the product excluded). */
  background: number;
  /** Of which not pure white. */
  impure: number;
  share: number;
  /** Largest impure region, for the message. */
  largest: Region | null;
  /** Neutral smooth grey reached from the background, as a share of all non-white pixels. */
  residueShare: number;
  /** That grey was too large a part to be a strip: a white or grey product, residue not separable. */
  neutralProduct: boolean;
};

const RING = 3;
/**
 * Neutral smooth grey reached from the background is a shadow or backdrop strip while it is a
 * small part of what is not white; above this share it is the product itself (a white or grey
 * garment), which no colour rule can tell from its shadow.
 */
const NEUTRAL_PRODUCT = 0.15;
/** Luma at or below which neutral grey on white is plainly visible (a shadow, not a pale edge). */
const VISIBLE_GREY = 238;
/** Least share of a strip's outline that must face the outside white for it to lie on the backdrop. */
const STRIP_FRONTIER = 1 / 3;

export function backgroundPurity(img: RawImage): PurityReport {
  const { width: w, height: h, channels: ch, data } = img;
  const n = w * h;
  const lum = new Float32Array(n);
  const white = new Uint8Array(n);
  const neutral = new Uint8Array(n);
  const offWhite = new Uint8Array(n);
  let nonWhite = 0;
  for (let i = 0; i < n; i++) {
    const r = data[i * ch]!;
    const g = data[i * ch + 1]!;
    const b = data[i * ch + 2]!;
    lum[i] = 0.299 * r + 0.587 * g + 0.114 * b;
    white[i] = r >= WHITE_FLOOR && g >= WHITE_FLOOR && b >= WHITE_FLOOR ? 1 : 0;
    if (!white[i]) nonWhite++;
    neutral[i] = Math.max(r, g, b) - Math.min(r, g, b) <= 10 && lum[i]! >= 110 ? 1 : 0;
  }
  // A backdrop that is not white at all (an off-white sweep left as it was) is background too.
  const border = estimateBackground(img);
  if (Math.min(border.r, border.g, border.b) < WHITE_FLOOR) {
    const backdrop = floodFromBorder(img, (p) =>
      isBackgroundPixel(img, p * ch, border, DEFAULT_TOLERANCE),
    );
    for (let i = 0; i < n; i++)
      if (backdrop[i] && !white[i]) {
        white[i] = 1;
        offWhite[i] = 1;
        nonWhite--;
      }
  }
  // Residue candidates: neutral grey whose non-white neighbours are all within 6 levels (no edge).
  const candidate = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (white[i] || !neutral[i]) continue;
    const x = i % w;
    let smooth = true;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i - w, i + w]) {
      if (j < 0 || j >= n || white[j]) continue;
      if (Math.abs(lum[j]! - lum[i]!) > 6) smooth = false;
    }
    candidate[i] = smooth ? 1 : 0;
  }
  // Seeds: residue touching the white reached from the frame (white inside a print is product).
  const outside = floodFromBorder(img, (p) => white[p] === 1);
  const residue = new Uint8Array(n);
  const stack = new Int32Array(n);
  let top = 0;
  for (let i = 0; i < n; i++) {
    if (!candidate[i]) continue;
    const x = i % w;
    if (
      (x > 0 && outside[i - 1]) ||
      (x < w - 1 && outside[i + 1]) ||
      (i >= w && outside[i - w]) ||
      (i + w < n && outside[i + w])
    ) {
      residue[i] = 1;
      stack[top++] = i;
    }
  }
  let residueCount = top;
  while (top > 0) {
    const p = stack[--top]!;
    const x = p % w;
    for (const q of [x > 0 ? p - 1 : -1, x < w - 1 ? p + 1 : -1, p - w, p + w]) {
      if (q < 0 || q >= n || residue[q] || !candidate[q]) continue;
      residue[q] = 1;
      residueCount++;
      stack[top++] = q;
    }
  }
  // A region of barely-off-white (the edge of a white garment) is not a visible shadow: a strip
  // counts when at least a quarter of it is visibly grey. A strip lying on the backdrop borders
  // the outside white along about half its outline (measured 0.42-0.49 on real cast shadows);
  // shaded white fabric (a hem, a sleeve's edge) is hemmed in by the garment (0.01-0.27).
  for (const c of label(residue, w, h)) {
    const grey = c.members.reduce((k, p) => k + (lum[p]! <= VISIBLE_GREY ? 1 : 0), 0);
    if (
      grey >= 0.25 * c.pixels &&
      outsideFrontier(c.members, residue, outside, w, h) >= STRIP_FRONTIER
    )
      continue;
    for (const p of c.members) residue[p] = 0;
    residueCount -= c.pixels;
  }
  const residueShare = nonWhite === 0 ? 0 : residueCount / nonWhite;
  const neutralProduct = residueShare > NEUTRAL_PRODUCT;
  if (neutralProduct) residue.fill(0);

  // The product: non-white, non-residue pixels; islands far smaller than the largest are specks.
  const product = new Uint8Array(n);
  for (let i = 0; i < n; i++) product[i] = !white[i] && !residue[i] ? 1 : 0;
  const components = label(product, w, h);
  const biggest = Math.max(0, ...components.map((c) => c.pixels));
  const impureMask = residue;
  for (let i = 0; i < n; i++) if (offWhite[i]) impureMask[i] = 1;
  for (const c of components) {
    if (c.pixels >= Math.max(16, biggest * 0.001)) continue;
    for (const p of c.members) {
      product[p] = 0;
      impureMask[p] = 1;
    }
  }
  const ring = dilate(product, w, h, RING);
  let background = 0;
  let impure = 0;
  for (let i = 0; i < n; i++) {
    if (ring[i]) continue;
    background++;
    if (impureMask[i]) impure++;
  }
  for (let i = 0; i < n; i++) if (ring[i]) impureMask[i] = 0;
  const regions = label(impureMask, w, h);
  const largest = regions.reduce<(typeof regions)[number] | null>(
    (a, b) => (a && a.pixels >= b.pixels ? a : b),
    null,
  );
  return {
    background,
    impure,
    share: background === 0 ? 0 : impure / background,
    largest: largest && {
      left: largest.left,
      top: largest.top,
      width: largest.width,
      height: largest.height,
      pixels: largest.pixels,
    },
    residueShare,
    neutralProduct,
  };
}

/** Of the 4-neighbours just outside a region, the share that is white reached from the frame. */
function outsideFrontier(
  members: number[],
  region: Uint8Array,
  outside: Uint8Array,
  w: number,
  h: number,
): number {
  let toOutside = 0;
  let total = 0;
  for (const p of members) {
    const x = p % w;
    for (const q of [
      x > 0 ? p - 1 : -1,
      x < w - 1 ? p + 1 : -1,
      p >= w ? p - w : -1,
      p < w * (h - 1) ? p + w : -1,
    ]) {
      if (q < 0 || region[q]) continue;
      total++;
      if (outside[q]) toOutside++;
    }
  }
  return total === 0 ? 0 : toOutside / total;
}

/** Pixels connected to the frame's border (4-connected) through pixels `inside` accepts. */
function floodFromBorder(img: RawImage, inside: (p: number) => boolean): Uint8Array {
  const { width: w, height: h } = img;
  const seen = new Uint8Array(w * h);
  const out = new Uint8Array(w * h);
  const stack = new Int32Array(w * h);
  let top = 0;
  const push = (p: number) => {
    if (seen[p]) return;
    seen[p] = 1;
    if (inside(p)) {
      out[p] = 1;
      stack[top++] = p;
    }
  };
  for (let x = 0; x < w; x++) {
    push(x);
    push((h - 1) * w + x);
  }
  for (let y = 0; y < h; y++) {
    push(y * w);
    push(y * w + w - 1);
  }
  while (top > 0) {
    const p = stack[--top]!;
    const x = p % w;
    if (x > 0) push(p - 1);
    if (x < w - 1) push(p + 1);
    if (p >= w) push(p - w);
    if (p < w * (h - 1)) push(p + w);
  }
  return out;
}

type Component = Region & { members: number[] };

/** 8-connected components of `mask`. */
function label(mask: Uint8Array, w: number, h: number): Component[] {
  const n = w * h;
  const seen = new Uint8Array(n);
  const stack = new Int32Array(n);
  const out: Component[] = [];
  for (let s = 0; s < n; s++) {
    if (!mask[s] || seen[s]) continue;
    seen[s] = 1;
    let top = 0;
    stack[top++] = s;
    const members: number[] = [];
    let minX = w,
      minY = h,
      maxX = 0,
      maxY = 0;
    while (top > 0) {
      const p = stack[--top]!;
      members.push(p);
      const x = p % w;
      const y = (p / w) | 0;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= h) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= w) continue;
          const q = yy * w + xx;
          if (mask[q] && !seen[q]) {
            seen[q] = 1;
            stack[top++] = q;
          }
        }
      }
    }
    out.push({
      left: minX,
      top: minY,
      width: maxX - minX + 1,
      height: maxY - minY + 1,
      pixels: members.length,
      members,
    });
  }
  return out;
}

/** `mask` grown by `r` pixels (square neighbourhood), as two separable passes. */
function dilate(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const across = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    let last = -1e9;
    for (let x = 0; x < w; x++) {
      if (mask[y * w + x]) last = x;
      if (x - last <= r) across[y * w + x] = 1;
    }
    last = 1e9;
    for (let x = w - 1; x >= 0; x--) {
      if (mask[y * w + x]) last = x;
      if (last - x <= r) across[y * w + x] = 1;
    }
  }
  const out = new Uint8Array(w * h);
  for (let x = 0; x < w; x++) {
    let last = -1e9;
    for (let y = 0; y < h; y++) {
      if (across[y * w + x]) last = y;
      if (y - last <= r) out[y * w + x] = 1;
    }
    last = 1e9;
    for (let y = h - 1; y >= 0; y--) {
      if (across[y * w + x]) last = y;
      if (last - y <= r) out[y * w + x] = 1;
    }
  }
  return out;
}
