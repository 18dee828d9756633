/**
 * photo_reframe: exactly the target ratio. When a crop of that ratio can hold the whole subject
 * with a margin, crop around it; otherwise extend the canvas by continuing the photo's own edges
 * (edge pixels carried outwards, then softened), never with bars.
 */
import type { Metadata, OverlayOptions, Sharp } from 'sharp';
import { sharp } from '../../../infra/sharp';
import { decodeMeta, ratioOf, rgbPixels } from './image-io';
import { dilate } from './matting/morphology';
import { computeMatte, matteAt, matteBox } from './remove-background';

/** How soft the carried-out edges are made. */
const blurSigma = (outW: number, outH: number): number => Math.max(2, Math.max(outW, outH) / 150);
/** Matte alpha from which a pixel is subject, and how far (px) the subject is widened for its fringe. */
const SUBJECT_ALPHA = 16;
const FRINGE = 2;

/**
 * The photo with the subject taken out of the bands the extension is made from: there each line
 * parallel to an extended edge has its subject pixels replaced by the backdrop beside them on the
 * outermost line (interpolated along it). Copying the photo's edge outwards smeared whatever
 * touched the frame across the new canvas: sleeves cut by the frame became streaks to the sides,
 * a head near the top a skin-coloured column above it, legs cut at the knees stripes below.
 */
function backdropPlate(
  data: Buffer,
  alpha: Buffer,
  w: number,
  h: number,
  sides: { horizontal: boolean; vertical: boolean; depth: number },
): Buffer {
  const subject = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) if (alpha[i]! >= SUBJECT_ALPHA) subject[i] = 1;
  const wide = dilate(subject, w, h, FRINGE);
  const plate = Buffer.from(data);
  // Backdrop pixels of the whole border: the colour when an edge line holds no backdrop at all.
  const border: number[][] = [[], [], []];
  for (let i = 0; i < w * h; i++) {
    const x = i % w;
    const y = (i / w) | 0;
    if ((x === 0 || y === 0 || x === w - 1 || y === h - 1) && !wide[i])
      for (let c = 0; c < 3; c++) border[c]!.push(data[i * 3 + c]!);
  }
  if (border[0]!.length === 0) return plate; // all subject: nothing to continue but the photo
  const fallback = border.map((v) => v.sort((a, b) => a - b)[v.length >> 1]!);
  const fillBand = (
    length: number,
    across: number,
    at: (along: number, depth: number) => number,
  ): void => {
    // The outermost line's backdrop, interpolated across its subject pixels.
    const edge = new Float32Array(length * 3);
    const colour = (j: number, c: number): number => data[at(j, 0) * 3 + c]!;
    let last = -1;
    for (let j = 0; j <= length; j++) {
      if (j < length && wide[at(j, 0)]) continue;
      for (let k = last + 1; k < j; k++) {
        for (let c = 0; c < 3; c++) {
          edge[k * 3 + c] =
            last >= 0 && j < length
              ? colour(last, c) + ((colour(j, c) - colour(last, c)) * (k - last)) / (j - last)
              : last >= 0
                ? colour(last, c)
                : j < length
                  ? colour(j, c)
                  : fallback[c]!;
        }
      }
      if (j < length) for (let c = 0; c < 3; c++) edge[j * 3 + c] = colour(j, c);
      last = j;
    }
    const depth = Math.min(sides.depth, across >> 1);
    for (let d = 0; d < depth; d++)
      for (let j = 0; j < length; j++) {
        const i = at(j, d);
        if (wide[i]) for (let c = 0; c < 3; c++) plate[i * 3 + c] = Math.round(edge[j * 3 + c]!);
      }
  };
  if (sides.horizontal) {
    fillBand(h, w, (y, d) => y * w + d);
    fillBand(h, w, (y, d) => y * w + w - 1 - d);
  }
  if (sides.vertical) {
    fillBand(w, h, (x, d) => d * w + x);
    fillBand(w, h, (x, d) => (h - 1 - d) * w + x);
  }
  return plate;
}

export async function reframePhoto(input: Buffer, targetRatio: string): Promise<Buffer> {
  await decodeMeta(input);
  const { data, width: w, height: h } = await rgbPixels(input);
  const ratio = ratioOf(targetRatio, w / h);
  const jpeg = (img: Sharp) => img.jpeg({ quality: 92 }).toBuffer();
  const raw = () => sharp(data, { raw: { width: w, height: h, channels: 3 } });

  // Largest crop of the target ratio inside the photo.
  const cropW = Math.min(w, Math.round(h * ratio));
  const cropH = Math.min(h, Math.round(cropW / ratio));
  const matte = await computeMatte(input);
  const box = matteBox(matte);
  if (box) {
    const sx = w / matte.width;
    const sy = h / matte.height;
    const subject = {
      left: box.left * sx,
      top: box.top * sy,
      right: (box.left + box.width) * sx,
      bottom: (box.top + box.height) * sy,
    };
    const margin = 0.04 * Math.max(cropW, cropH);
    const fits =
      subject.right - subject.left + 2 * margin <= cropW &&
      subject.bottom - subject.top + 2 * margin <= cropH;
    if (fits) {
      const cx = (subject.left + subject.right) / 2;
      const cy = (subject.top + subject.bottom) / 2;
      const left = Math.round(Math.min(w - cropW, Math.max(0, cx - cropW / 2)));
      const top = Math.round(Math.min(h - cropH, Math.max(0, cy - cropH / 2)));
      return jpeg(raw().extract({ left, top, width: cropW, height: cropH }));
    }
  }
  // Extend: the canvas grows on the short axis so the whole photo stays.
  const outW = Math.max(w, Math.round(h * ratio));
  const outH = Math.max(h, Math.round(outW / ratio));
  const left = Math.floor((outW - w) / 2);
  const top = Math.floor((outH - h) / 2);
  const plate = await backdropPlate(data, await matteAt(matte, w, h), w, h, {
    horizontal: outW > w,
    vertical: outH > h,
    depth: Math.ceil(3 * blurSigma(outW, outH)),
  });
  const extended = await sharp(plate, { raw: { width: w, height: h, channels: 3 } })
    .extend({ left, right: outW - w - left, top, bottom: outH - h - top, extendWith: 'copy' })
    .raw()
    .toBuffer();
  // Soften the carried-out edges so streaks read as background, then put the photo back sharp.
  const soft = await sharp(extended, { raw: { width: outW, height: outH, channels: 3 } })
    .blur(blurSigma(outW, outH))
    .raw()
    .toBuffer();
  return jpeg(
    sharp(soft, { raw: { width: outW, height: outH, channels: 3 } }).composite([
      { input: data, raw: { width: w, height: h, channels: 3 }, left, top },
    ]),
  );
}
