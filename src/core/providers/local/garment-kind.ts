/**
 * What kind of garment a cut-out shows, read from its silhouette (the request carries no garment
 * type): trousers have a gap between the legs at the bottom, skirts a solid waistband narrower
 * than the hem, dresses are long for their body, and anything else is a top. Used to dress a
 * figure: tops on the torso, bottoms on the legs, dresses from the shoulders down.
 *
 * "Long for its body" is the length over the body's width (the narrowest row between chest and
 * hip, where sleeves and straps have ended): a dress reaches the knee, 3.8-5.3 body widths on the
 * real set, while tops stay under 2.8 even when long (a halter tunic 2.76, a flared cami 2.26).
 * The outline's aspect alone cannot tell them apart: a cami is 1.71 times as tall as wide, a dress
 * with puffed sleeves 1.60. On the 41 real garments of ../shared/eval: 41 right (was 39; the
 * halter and the cami read as dresses).
 */
import { sharp } from '../../../infra/sharp';

export type GarmentKind = 'top' | 'bottom' | 'dress';

export type Silhouette = {
  /** Height over width of the garment's box. */
  aspect: number;
  /** Height over the body's width: the narrowest row from a quarter to 60% of the height. */
  length: number;
  legGap: boolean;
  skirt: boolean;
};

/** Body widths that only a dress is long: tops measured up to 2.76, dresses from 3.80. */
const DRESS_LENGTH = 3.25;

const SIDE = 160;

/**
 * Silhouette measures of a mask (1 = garment) on a w x h grid. `solid` marks the pixels that are
 * surely garment (not backdrop-coloured): the gap between trouser legs is looked for there, since
 * a cut-out can keep that gap when it is enclosed.
 */
export function silhouette(
  mask: Uint8Array,
  w: number,
  h: number,
  solid: Uint8Array = mask,
): Silhouette | null {
  let minX = w,
    minY = h,
    maxX = -1,
    maxY = -1;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      if (mask[y * w + x]) {
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
  if (maxX < 0) return null;
  const bw = maxX - minX + 1;
  const bh = maxY - minY + 1;
  const row = (fy: number) => {
    const y = Math.min(maxY, minY + Math.round(fy * (bh - 1)));
    let left = -1,
      right = -1,
      set = 0;
    for (let x = minX; x <= maxX; x++)
      if (mask[y * w + x]) {
        if (left < 0) left = x;
        right = x;
        set++;
      }
    return {
      left,
      right,
      extent: left < 0 ? 0 : right - left + 1,
      fill: left < 0 ? 0 : set / (right - left + 1),
    };
  };
  // Between the legs: the middle of the garment's own extent is empty in the lower half, over
  // rows (wide legs can meet at the hem, so not only the hem is sampled).
  const gapRows = (m: Uint8Array) => {
    let rows = 0;
    for (const fy of [0.55, 0.65, 0.75, 0.85, 0.95]) {
      const r = row(fy);
      if (r.left < 0) continue;
      const mid = Math.round((r.left + r.right) / 2);
      const y = Math.min(maxY, minY + Math.round(fy * (bh - 1)));
      const half = Math.max(1, Math.round(bw * 0.03));
      let empty = 0;
      for (let x = mid - half; x <= mid + half; x++) if (!m[y * w + x]) empty++;
      if (empty >= half) rows++;
    }
    return rows;
  };
  // Backdrop-coloured pixels count as a gap only on long garments: on a white tee they are fabric.
  const legGap = gapRows(mask) >= 2 || (bh / bw > 1.5 && gapRows(solid) >= 2);
  const top = row(0.04);
  const hem = row(0.96);
  // The body: below the sleeves and straps (they end by a quarter of a top's height), above a
  // dress's hips and flare.
  let body = bw;
  for (let fy = 0.25; fy <= 0.6; fy += 0.02) body = Math.min(body, Math.max(1, row(fy).extent));
  return {
    aspect: bh / bw,
    length: bh / body,
    legGap,
    skirt: top.fill > 0.9 && top.extent < 0.8 * hem.extent,
  };
}

export function kindOf(s: Silhouette): GarmentKind {
  if (s.legGap && s.aspect > 0.9) return 'bottom';
  // A short skirt: a solid waistband clearly narrower than the hem, and wide (tops' collars also
  // give a narrow solid first row, but tops are not much wider than tall at the hem).
  if (s.skirt && s.aspect < 0.75) return 'bottom';
  if (s.aspect > 1.5 && s.length > DRESS_LENGTH) return 'dress';
  return 'top';
}

/** The kind of garment in a cut-out (RGBA; transparent pixels keep the photo's backdrop colour). */
export async function garmentKind(cutout: Buffer): Promise<GarmentKind> {
  // The backdrop colour from the full-size transparent pixels (resizing premultiplies them to black).
  const full = await sharp(cutout).ensureAlpha().raw().toBuffer();
  const backdrop: number[][] = [[], [], []];
  for (let i = 0; i < full.length; i += 4 * 7)
    if (full[i + 3] === 0) for (let c = 0; c < 3; c++) backdrop[c]!.push(full[i + c]!);
  const median = backdrop.map((v) => v.sort((a, b) => a - b)[v.length >> 1] ?? -100);
  const { data, info } = await sharp(cutout)
    .ensureAlpha()
    .resize(SIDE, SIDE, { fit: 'inside', kernel: 'nearest' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  const mask = new Uint8Array(n);
  const solid = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    mask[i] = data[i * 4 + 3]! > 127 ? 1 : 0;
    solid[i] =
      mask[i] && Math.max(...[0, 1, 2].map((c) => Math.abs(data[i * 4 + c]! - median[c]!))) > 8
        ? 1
        : 0;
  }
  const s = silhouette(mask, info.width, info.height, solid);
  return s ? kindOf(s) : 'top';
}

/** A garment the request names, in its own word (for the message when it cannot be found). */
export type NamedGarment = { kind: GarmentKind; word: string };

// "dress" before a garment word is an adjective (a dress shirt, dress trousers).
const GARMENT_WORDS: Record<GarmentKind, RegExp> = {
  top: /\b(crop tops?|tank tops?|tops|top|t-?shirts?|tees?|shirts?|blouses?|camis?|camisoles?|tanks?|sweaters?|jumpers?|hoodies?|sweatshirts?|cardigans?|jackets?|coats?|blazers?|polos?|tunics?|bodysuits?|bralettes?|bras?|vests?)\b/g,
  bottom:
    /\b(jeans|denims|trousers|pants|slacks|chinos|joggers|sweatpants|leggings|shorts|skirts?|culottes|bottoms)\b/g,
  dress:
    /\b(dress(?:es)?|gowns?|sundress(?:es)?|jumpsuits?|playsuits?|rompers?|pinafores?)\b(?!\s+(?:shirts?|pants|trousers|shoes))/g,
};

/**
 * The garment a model_to_flat_lay instruction asks for: the one kind of garment it names (a bottom
 * for jeans, trousers, a skirt...; a dress; a top for a shirt, a tee...), null when it names none,
 * and every word found when it names more than one kind (the renderer lays out one garment and will
 * not guess which). "Top" as a place ("on top of", "top view", "from the top") is not a garment.
 */
export function garmentNamedIn(instruction: string): NamedGarment | null | { several: string[] } {
  const text = instruction
    .toLowerCase()
    .replace(
      /\b(on|from|at) (the )?(very )?top\b|\btop[\s-]*(down|view|of|left|right|edge)\b/g,
      ' ',
    );
  const found: NamedGarment[] = [];
  for (const kind of ['top', 'bottom', 'dress'] as const)
    for (const m of text.matchAll(GARMENT_WORDS[kind])) found.push({ kind, word: m[1]! });
  if (found.length === 0) return null;
  const kinds = new Set(found.map((f) => f.kind));
  return kinds.size === 1 ? found[0]! : { several: [...new Set(found.map((f) => f.word))] };
}
