/**
 * photo_reframe: exactly the target ratio. When a crop of that ratio can hold the whole subject
 * with a margin, crop around it; otherwise extend the canvas by continuing the photo's own edges
 * (edge pixels carried outwards, then softened), never with bars. A subject the frame cuts on one
 * side of the axis being extended keeps running off that side: the added canvas goes to the other.
 */
import type { Metadata, OverlayOptions, Sharp } from 'sharp';
import { sharp } from '../../../infra/sharp';
import { decodeMeta, ratioOf, rgbPixels } from './image-io';
import { dilate } from './matting/morphology';
import { computeMatte, matteAt, matteBox, type Matte } from './remove-background';

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

/** Window (share of an edge line) of the running median that is the backdrop's trend along it. */
const TREND_WINDOW = 1 / 3;
/** Distance (share of the canvas's long side) over which the added canvas fades into that trend. */
const FADE = 0.08;

/**
 * Carried straight out, an edge line repeats what lies on the backdrop at the edge (the shadow
 * and reflection of a model's feet on the floor became grey columns down the added canvas): away
 * from the photo the added canvas fades from the edge line into its running median, which keeps
 * the backdrop's gradients and steps (a wall meeting the floor) and drops narrower marks.
 */
function fadeToTrend(
  canvas: Buffer,
  outW: number,
  outH: number,
  photo: { left: number; top: number; width: number; height: number },
): void {
  const fade = Math.max(1, FADE * Math.max(outW, outH));
  const side = (length: number, at: (along: number) => number, outward: number[]) => {
    const edge = new Float32Array(length * 3);
    for (let j = 0; j < length; j++)
      for (let c = 0; c < 3; c++) edge[j * 3 + c] = canvas[at(j) * 3 + c]!;
    const trend = runningMedian(edge, length, Math.max(15, Math.round(length * TREND_WINDOW)));
    outward.forEach((offset, k) => {
      const t = Math.min(1, (k + 1) / fade);
      for (let j = 0; j < length; j++)
        for (let c = 0; c < 3; c++)
          canvas[(at(j) + offset) * 3 + c] = Math.round(
            edge[j * 3 + c]! + (trend[j * 3 + c]! - edge[j * 3 + c]!) * t,
          );
    });
  };
  const { left, top, width, height } = photo;
  const steps = (n: number, stride: number) =>
    Array.from({ length: n }, (_, k) => (k + 1) * stride);
  // Whole rows and columns of the canvas: the canvas grows on one axis, so there are no corners.
  if (top > 0) side(outW, (x) => top * outW + x, steps(top, -outW));
  const below = outH - top - height;
  if (below > 0) side(outW, (x) => (top + height - 1) * outW + x, steps(below, outW));
  if (left > 0) side(outH, (y) => y * outW + left, steps(left, -1));
  const right = outW - left - width;
  if (right > 0) side(outH, (y) => y * outW + left + width - 1, steps(right, 1));
}

/** Running median of an RGB line (sampled within the window: linear enough for long edges). */
function runningMedian(values: Float32Array, n: number, window: number): Float32Array {
  const out = new Float32Array(n * 3);
  const r = window >> 1;
  const step = Math.max(1, Math.floor(window / 48));
  const sample: number[] = [];
  for (let c = 0; c < 3; c++)
    for (let j = 0; j < n; j++) {
      sample.length = 0;
      for (let k = Math.max(0, j - r); k <= Math.min(n - 1, j + r); k += step)
        sample.push(values[k * 3 + c]!);
      sample.sort((a, b) => a - b);
      out[j * 3 + c] = sample[sample.length >> 1]!;
    }
  return out;
}

/**
 * Share of a frame edge's line the subject must cover for the frame to cut it: narrower is a
 * sliver (a fingertip, a backdrop seam the matte kept: 052767_0's 1.9%) that is not worth moving
 * the composition for; an elbow cut by the frame covers 4.5%, legs 10-50%.
 */
const CUT_SHARE = 0.03;

/** The frame edges the subject runs out of: its matte reaches the outermost line there. */
function matteCut(matte: Matte): Record<'left' | 'right' | 'top' | 'bottom', boolean> {
  const { alpha, width: mw, height: mh } = matte;
  const reached = (at: (j: number) => number, n: number) => {
    let c = 0;
    for (let j = 0; j < n; j++) if (alpha[at(j)]! >= 128) c++;
    return c >= n * CUT_SHARE;
  };
  return {
    top: reached((x) => x, mw),
    bottom: reached((x) => (mh - 1) * mw + x, mw),
    left: reached((y) => y * mw, mh),
    right: reached((y) => y * mw + mw - 1, mh),
  };
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
  const cut = matteCut(matte);
  if (box) {
    const sx = w / matte.width;
    const sy = h / matte.height;
    const subject = {
      left: box.left * sx,
      top: box.top * sy,
      right: (box.left + box.width) * sx,
      bottom: (box.top + box.height) * sy,
    };
    // Only the axis the crop shortens needs room: on the other the subject stays where the photo
    // has it (a model whose legs run out of a 3:4 photo still fits a 9:16 crop of its width).
    const fitsWith = (margin: number) =>
      (cropW >= w || subject.right - subject.left + 2 * margin <= cropW) &&
      (cropH >= h || subject.bottom - subject.top + 2 * margin <= cropH);
    // A subject the frame cuts at both ends of the axis an extension would grow (head and legs)
    // would float there cut twice: a crop that holds it whole, if without margin, is the frame.
    const cutAcrossExtension = cropW < w ? cut.top && cut.bottom : cut.left && cut.right;
    const fits = fitsWith(0.04 * Math.max(cropW, cropH)) || (cutAcrossExtension && fitsWith(0));
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
  // Canvas added beyond a side the subject is cut by would end it in a straight line over blank
  // backdrop (legs cut at the knees stood on a wall): the photo keeps that side at the frame.
  const place = (room: number, low: boolean, high: boolean) =>
    low === high ? Math.floor(room / 2) : low ? 0 : room;
  const left = place(outW - w, cut.left, cut.right);
  const top = place(outH - h, cut.top, cut.bottom);
  const plate = await backdropPlate(data, await matteAt(matte, w, h), w, h, {
    horizontal: outW > w,
    vertical: outH > h,
    depth: Math.ceil(3 * blurSigma(outW, outH)),
  });
  const extended = await sharp(plate, { raw: { width: w, height: h, channels: 3 } })
    .extend({ left, right: outW - w - left, top, bottom: outH - h - top, extendWith: 'copy' })
    .raw()
    .toBuffer();
  fadeToTrend(extended, outW, outH, { left, top, width: w, height: h });
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
