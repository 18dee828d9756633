/**
 * model_to_flat_lay needs the garment without the person wearing it. Offline, from a person's
 * cut-out: skin goes (a plain skin-colour rule), the head goes (the figure's top band down to the
 * lowest skin there), and the largest piece left, once thin links are cut, is the garment. When
 * little skin shows (a garment photo, a mannequin), the cut-out is the garment already.
 */
import { sharp } from '../../../infra/sharp';
import { components, dilate, erode } from './matting/morphology';

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

export async function garmentFromPerson(cutout: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(cutout)
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = info;
  const n = w * h;
  const keep = new Uint8Array(n);
  let opaque = 0;
  let skin = 0;
  let top = h;
  let bottom = -1;
  for (let i = 0; i < n; i++) {
    if (data[i * 4 + 3]! < 128) continue;
    opaque++;
    const y = (i / w) | 0;
    if (y < top) top = y;
    if (y > bottom) bottom = y;
    if (isSkin(data[i * 4]!, data[i * 4 + 1]!, data[i * 4 + 2]!)) skin++;
    else keep[i] = 1;
  }
  if (opaque === 0 || skin < opaque * PERSON_SKIN) return cutout;
  // The head: the top band of the figure down to the lowest row where skin fills the face's width.
  const band = top + Math.round((bottom - top) * 0.22);
  let headEnd = top;
  for (let y = top; y <= band; y++) {
    let rowSkin = 0;
    for (let x = 0; x < w; x++)
      if (data[(y * w + x) * 4 + 3]! >= 128 && !keep[y * w + x]) rowSkin++;
    if (rowSkin >= w * 0.02) headEnd = y;
  }
  for (let i = 0; i < (headEnd + 1) * w; i++) keep[i] = 0;
  // Cut the thin links (hair strands, straps over skin) and keep the largest piece.
  const r = Math.max(1, Math.round(Math.max(w, h) / 300));
  const opened = dilate(erode(keep, w, h, r), w, h, r);
  for (let i = 0; i < n; i++) opened[i]! &= keep[i]!;
  const { label, sizes } = components(opened, w);
  let best = -1;
  for (let k = 0; k < sizes.length; k++) if (best < 0 || sizes[k]! > sizes[best]!) best = k;
  if (best < 0 || sizes[best]! < opaque * 0.1) return cutout;
  const out = Buffer.from(data);
  for (let i = 0; i < n; i++) if (label[i] !== best) out[i * 4 + 3] = 0;
  return sharp(out, { raw: { width: w, height: h, channels: 4 } })
    .png()
    .toBuffer();
}
