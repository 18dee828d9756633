/**
 * Where jewelry goes on a real person's cut-out (the caller's own model photo), read from the
 * person rather than from fixed fractions of the frame: the face is the topmost sizeable skin blob
 * near the top of the figure, the ears at its sides a little below its middle, the neck under the chin;
 * the hands are the skin at the ends of the arms, the lowest skin on each side of the body, away
 * from the legs. A part that cannot be found is left out: the caller does not guess it.
 */
import { sharp } from '../../../infra/sharp';
import { isSkin } from './garment-from-person';
import { components } from './matting/morphology';

type Pt = { x: number; y: number };

export type PersonParts = {
  /** The face's box (its skin, forehead to chin). */
  face?: { x: number; y: number; width: number; height: number };
  /** Ear lobes, left then right in the picture. */
  ears?: [Pt, Pt];
  neck?: Pt;
  /** The figure's width across the shoulders (arms included), on the row it was read. */
  shoulders?: { y: number; left: number; right: number };
  /** Where a bracelet and a ring go on each hand found (left then right in the picture). */
  wrists: Pt[];
  hands: Pt[];
};

const WORK = 320;

/** Body parts of a person cut-out (RGBA), in its pixel coordinates. */
export async function personParts(cutout: Buffer): Promise<PersonParts> {
  const meta = await sharp(cutout).metadata();
  const W = meta.width!;
  const H = meta.height!;
  const k = Math.min(1, WORK / Math.max(W, H));
  const w = Math.max(1, Math.round(W * k));
  const h = Math.max(1, Math.round(H * k));
  const { data } = await sharp(cutout)
    .ensureAlpha()
    .resize(w, h, { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const n = w * h;
  const skin = new Uint8Array(n);
  let top = h;
  let bottom = -1;
  for (let i = 0; i < n; i++) {
    if (data[i * 4 + 3]! < 128) continue;
    const y = (i / w) | 0;
    top = Math.min(top, y);
    bottom = Math.max(bottom, y);
    if (isSkin(data[i * 4]!, data[i * 4 + 1]!, data[i * 4 + 2]!)) skin[i] = 1;
  }
  const none: PersonParts = { wrists: [], hands: [] };
  if (bottom < 0) return none;
  const figH = bottom - top + 1;
  const back = (p: Pt): Pt => ({ x: (p.x + 0.5) / k, y: (p.y + 0.5) / k });

  // The face: the topmost sizeable skin blob in the figure's top quarter (below it, bare
  // shoulders and chest can make a larger one). Its width is read on its first rows, the
  // forehead and cheeks (below them the neck and shoulders can join it).
  const upper = Uint8Array.from(skin);
  upper.fill(0, Math.min(n, (top + Math.round(figH * 0.25)) * w));
  const { label, sizes } = components(upper, w);
  const largest = Math.max(0, ...sizes);
  let best = -1;
  for (let i = 0; i < n && best < 0; i++) {
    const c = label[i]!;
    if (c >= 0 && sizes[c]! >= Math.max(12, largest * 0.25)) best = c;
  }
  if (best < 0) return none;
  const y0 = (label.indexOf(best) / w) | 0;
  let left = w;
  let right = -1;
  const probe = Math.max(2, Math.round(figH * 0.05));
  for (let y = y0; y < Math.min(h, y0 + probe * 2); y++)
    for (let x = 0; x < w; x++)
      if (label[y * w + x] === best) ((left = Math.min(left, x)), (right = Math.max(right, x)));
  const fw = right - left + 1;
  // A face is about 1.3 times as tall as wide.
  const fh = fw * 1.3;
  if (fw < 3 || fh > figH * 0.5) return none;
  const cx = (left + right) / 2;
  const chin = y0 + fh;
  // A face is narrower than the shoulders below it: a blob as wide as the body there is a
  // garment of skin's colour, not a face.
  const shoulders = Math.min(h - 1, Math.round(chin + fh * 0.9));
  let sl = w;
  let sr = -1;
  for (let x = 0; x < w; x++)
    if (data[(shoulders * w + x) * 4 + 3]! >= 128) ((sl = Math.min(sl, x)), (sr = x));
  if (sr - sl + 1 < fw * 1.6) return none;
  // Lobes: about halfway down the face, at its sides on that row (cheeks and ears are wider
  // than the forehead); a row wider than a head has the shoulders joined, and is not used.
  const earY = Math.min(h - 1, Math.round(y0 + fh * 0.5));
  let earL = w;
  let earR = -1;
  for (let x = 0; x < w; x++)
    if (label[earY * w + x] === best) ((earL = Math.min(earL, x)), (earR = Math.max(earR, x)));
  if (earR < 0 || earR - earL + 1 > fw * 1.6) [earL, earR] = [left, right];
  const toFull = (b: { x: number; y: number; width: number; height: number }) => ({
    x: b.x / k,
    y: b.y / k,
    width: b.width / k,
    height: b.height / k,
  });
  const parts: PersonParts = {
    face: toFull({ x: left, y: y0, width: fw, height: fh }),
    ears: [back({ x: earL, y: earY }), back({ x: earR, y: earY })],
    neck: back({ x: cx, y: chin + fh * 0.3 }),
    shoulders: { y: (shoulders + 0.5) / k, left: sl / k, right: (sr + 1) / k },
    wrists: [],
    hands: [],
  };

  // Hands: on each side, the skin beside the body (more than a face width from its axis) below
  // the shoulders and above mid-thigh (where hanging arms end; bare legs go on below); its
  // lowest rows are the hand, a little above them the wrist.
  const from = Math.round(chin + fh * 0.8);
  const to = Math.min(h - 1, Math.round(chin + fh * 4.5));
  for (const side of [-1, 1]) {
    let low = -1;
    for (let y = to; y >= from && low < 0; y--)
      for (let x = 0; x < w; x++) if (skin[y * w + x] && (x - cx) * side > fw) low = y;
    if (low < 0) continue;
    // The hand: the skin on the side within ~0.4 face heights above its lowest row.
    let hx = 0;
    let hy = 0;
    let hc = 0;
    for (let y = Math.max(from, Math.round(low - fh * 0.4)); y <= low; y++)
      for (let x = 0; x < w; x++)
        if (skin[y * w + x] && (x - cx) * side > fw) ((hx += x), (hy += y), hc++);
    if (hc < 4) continue;
    const hand = { x: hx / hc, y: hy / hc };
    parts.hands.push(back(hand));
    parts.wrists.push(back({ x: hand.x, y: Math.max(from, hand.y - fh * 0.35) }));
  }
  if (parts.hands.length === 2 && parts.hands[0]!.x > parts.hands[1]!.x) {
    parts.hands.reverse();
    parts.wrists.reverse();
  }
  return parts;
}

type Box = { x: number; y: number; width: number; height: number };

/**
 * Where a top and trousers go on the person, in head heights from the face found: the torso from
 * just under the chin to the hips 2.7 heads below it, the legs about four heads long (running past
 * the bottom of a photo cut at the thighs). Without a face, none: the caller does not guess.
 */
export function bodyBoxes(parts: PersonParts): { torso: Box; legs: Box } | undefined {
  if (!parts.face || !parts.shoulders) return undefined;
  const head = parts.face.height;
  const cx = parts.face.x + parts.face.width / 2;
  const chin = parts.face.y + head;
  const shoulderWidth = parts.shoulders.right - parts.shoulders.left;
  const torsoTop = chin + head * 0.4;
  const hips = chin + head * 2.7;
  const hipWidth = shoulderWidth * 0.8;
  return {
    torso: {
      x: cx - shoulderWidth / 2,
      y: torsoTop,
      width: shoulderWidth,
      height: hips - torsoTop,
    },
    legs: { x: cx - hipWidth / 2, y: hips, width: hipWidth, height: head * 3.9 },
  };
}
