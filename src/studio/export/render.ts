import fs from 'node:fs/promises';
import { sharp } from '../../infra/sharp';
import { cutOutLocally } from '../../client/local-cut-out';
import type { Sharp } from 'sharp';
import { effectiveFormat, PRESETS, type ExportSettings, type OutputFormat } from './presets';
import {
  DEFAULT_TOLERANCE,
  estimateBackground,
  productBox,
  productBoxAcrossRows,
  seamRows,
  whitenBackground,
  type Box,
  type RawImage,
} from './product-bbox';
import { backdropLine, SIDES, type Side } from './edge-band';

export type RenderSettings = Pick<ExportSettings, 'preset' | 'format' | 'quality'>;

export type RenderResult = {
  data: Buffer;
  format: OutputFormat;
  width: number;
  height: number;
  /** Source size after EXIF orientation, for the `original` preset's size check. */
  sourceWidth: number;
  sourceHeight: number;
  /** What the preset did that the user did not ask for (forced JPEG, upscaling, padding...). */
  notes: string[];
  /** How much the photo was enlarged to fill the preset (1: not enlarged). */
  upscale: number;
  /** The source is an offline preview (marked by the renderer), not a finished photo. */
  preview: boolean;
};

/** The offline renderer writes this into every preview's EXIF description (core/providers/local/compose.ts). */
export const PREVIEW_MARK = 'PREVIEW: Dropshoot offline renderer';

/** Whether an image carries the offline renderer's preview mark in its metadata. */
export async function isPreview(input: string | Buffer): Promise<boolean> {
  const { exif, xmp } = await sharp(input).metadata();
  return [exif, xmp].some((b) => b !== undefined && b.toString('latin1').includes(PREVIEW_MARK));
}

/** Renders one result image for a marketplace preset. Output is always sRGB with its ICC profile. */
export async function renderForPreset(
  input: string | Buffer,
  settings: RenderSettings,
): Promise<RenderResult> {
  const preset = PRESETS[settings.preset];
  const { format, note } = effectiveFormat(settings);
  const notes = note ? [note] : [];
  // JPEG has no alpha: flatten onto white, the marketplace default, never onto black.
  const flatten = format === 'jpeg' || preset.whiteBackground;
  // Read once: decoded, looked at for the preview mark and transparency, and maybe cut out.
  const source = typeof input === 'string' ? await fs.readFile(input) : input;
  const raw = await decode(source, flatten);
  const preview = await isPreview(source);
  const { width: sw, height: sh } = raw;
  let upscale = 1;
  const pixels = sharp(raw.data, { raw: { width: sw, height: sh, channels: raw.channels } });
  let pipeline: Sharp;
  let width = sw;
  let height = sh;

  const framing = preset.framing;
  switch (framing.kind) {
    case 'keep':
      pipeline = pixels;
      break;
    case 'fill': {
      // A cut-out's transparency is its background, already flattened to white.
      const onWhite = (await isCutout(source)) ? raw : await cutOutOnWhite(source, raw, notes);
      const box = productBox(onWhite, { r: 255, g: 255, b: 255 }, 8) ?? fullBox(sw, sh);
      const scale = (framing.fill * framing.longestSide) / Math.max(box.width, box.height);
      upscale = Math.max(1, scale);
      if (scale > 1) notes.push(`Upscaled ${scale.toFixed(2)}× to reach ${framing.longestSide} px`);
      const pw = Math.max(1, Math.round(box.width * scale));
      const ph = Math.max(1, Math.round(box.height * scale));
      const margin = Math.round((framing.longestSide - Math.max(pw, ph)) / 2);
      width = pw + 2 * margin;
      height = ph + 2 * margin;
      // Make the long side exact whatever the rounding did.
      const fixW = pw >= ph ? framing.longestSide - width : 0;
      const fixH = ph > pw ? framing.longestSide - height : 0;
      width += fixW;
      height += fixH;
      pipeline = sharp(onWhite.data, { raw: { width: sw, height: sh, channels: onWhite.channels } })
        .extract(box)
        .resize(pw, ph, { fit: 'fill' })
        .extend({
          top: margin,
          bottom: margin + fixH,
          left: margin,
          right: margin + fixW,
          background: { r: 255, g: 255, b: 255, alpha: 1 },
        });
      break;
    }
    case 'canvas': {
      const lines = new Map(SIDES.map((side) => [side, backdropLine(raw, side)]));
      // Read against each row's own backdrop where both side edges are backdrop: against the
      // border's one median colour, a wall lit unevenly made the product span the whole width
      // (the model was placed off-centre, or the photo cropped through the figure).
      const box =
        sideLinesBox(raw, lines.get('left')!, lines.get('right')!) ??
        productBox(raw, estimateBackground(raw), DEFAULT_TOLERANCE);
      const aspect = framing.width / framing.height;
      let w = canvasWindow(sw, sh, box, aspect);
      let crop = intersect(w, sw, sh);
      const short = {
        top: crop.top - w.top,
        left: crop.left - w.left,
        bottom: w.top + w.height - (crop.top + crop.height),
        right: w.left + w.width - (crop.left + crop.width),
      };
      const needed = SIDES.filter((side) => short[side] > 0);
      const touched: Record<Side, boolean> = {
        top: !!box && box.top <= 0,
        left: !!box && box.left <= 0,
        bottom: !!box && box.top + box.height >= sh,
        right: !!box && box.left + box.width >= sw,
      };
      if (needed.some((side) => touched[side] || !lines.get(side)!.extendable)) {
        // Extending a busy edge smears it, and padding beyond a side the product is cut by floats
        // the cut (a head, legs) in blank backdrop: fit the canvas ratio inside the photo and crop.
        w = insideWindow(sw, sh, box, aspect);
        crop = w;
        needed.length = 0;
        const cut =
          box &&
          (box.left < w.left ||
            box.top < w.top ||
            box.left + box.width > w.left + w.width ||
            box.top + box.height > w.top + w.height);
        notes.push(
          `Cropped to ${framing.width}×${framing.height}: the photo's edge is not plain backdrop, so it was not extended${cut ? ' (the product is cut at the frame)' : ''}`,
        );
      }
      const scale = framing.width / w.width;
      upscale = Math.max(1, scale);
      const cw = Math.max(1, Math.min(framing.width, Math.round(crop.width * scale)));
      const ch = Math.max(1, Math.min(framing.height, Math.round(crop.height * scale)));
      const left = Math.min(
        framing.width - cw,
        Math.max(0, Math.round((crop.left - w.left) * scale)),
      );
      const top = Math.min(
        framing.height - ch,
        Math.max(0, Math.round((crop.top - w.top) * scale)),
      );
      if (needed.length > 0) notes.push(`Padded by continuing the backdrop (${needed.join(', ')})`);
      if (scale > 1) notes.push(`Upscaled ${scale.toFixed(2)}×`);
      // Rounding leaves a pixel or two beside the photo on sides that are not padded: the photo's
      // own edge is copied there (a backdrop line beside a figure cut by the frame drew a stripe).
      const gap = {
        left: needed.includes('left') ? 0 : left,
        top: needed.includes('top') ? 0 : top,
        right: needed.includes('right') ? 0 : framing.width - left - cw,
        bottom: needed.includes('bottom') ? 0 : framing.height - top - ch,
      };
      const pw = cw + gap.left + gap.right;
      const ph = ch + gap.top + gap.bottom;
      const photo = await sharp(raw.data, {
        raw: { width: sw, height: sh, channels: raw.channels },
      })
        .extract(crop)
        .resize(cw, ch, { fit: 'fill' })
        .extend({ ...gap, extendWith: 'copy' })
        .raw()
        .toBuffer();
      const canvas = backdropCanvas(
        framing.width,
        framing.height,
        raw.channels,
        { left, top, width: cw, height: ch },
        { crop, scale, sw, sh },
        new Map(needed.map((side) => [side, lines.get(side)!])),
      );
      pipeline = sharp(canvas, {
        raw: { width: framing.width, height: framing.height, channels: raw.channels },
      }).composite([
        {
          input: photo,
          raw: { width: pw, height: ph, channels: raw.channels },
          left: left - gap.left,
          top: top - gap.top,
        },
      ]);
      width = framing.width;
      height = framing.height;
      break;
    }
  }
  const data = await encode(pipeline, format, settings.quality).toBuffer();
  return {
    data,
    format,
    width,
    height,
    sourceWidth: sw,
    sourceHeight: sh,
    notes,
    upscale,
    preview,
  };
}

/**
 * The photo on pure white, its product found by the local cut-out. Flooding the backdrop's colour
 * in from the border took white and light garments with it (a white tee on white kept a fifth of
 * itself, 050105_1) and left shadows as grey islands that the product box then reached for. Where
 * the cut-out cannot be made, that flood it is, said in the notes.
 */
export async function cutOutOnWhite(
  photo: Buffer,
  raw: RawImage,
  notes: string[],
): Promise<RawImage> {
  try {
    const cut = await decode(await cutOutLocally(photo), true);
    if (cut.width === raw.width && cut.height === raw.height) return cut;
  } catch {
    // Too small or unreadable for the cut-out: the colour flood below still gives an export.
  }
  whitenBackground(raw, estimateBackground(raw));
  notes.push(
    'The product could not be cut out: the backdrop was whitened by its colour, which can take light parts of the product with it',
  );
  return raw;
}

/** Whether the image has transparent pixels (a cut-out), not only an alpha channel. */
async function isCutout(input: string | Buffer): Promise<boolean> {
  const image = sharp(input);
  if (!(await image.metadata()).hasAlpha) return false;
  const { channels } = await image.stats();
  return (channels[3]?.min ?? 255) < 255;
}

/** Decodes once to 8-bit sRGB pixels, honouring EXIF orientation; rejects corrupt input. */
async function decode(input: string | Buffer, flatten: boolean): Promise<RawImage> {
  let image = sharp(input, { failOn: 'error' }).autoOrient().toColourspace('srgb');
  image = flatten ? image.flatten({ background: '#ffffff' }) : image.ensureAlpha();
  const { data, info } = await image.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels === 4 ? 4 : 3 };
}

export function encode(pipeline: Sharp, format: OutputFormat, quality: number): Sharp {
  const srgb = pipeline.toColourspace('srgb').withIccProfile('srgb');
  switch (format) {
    case 'jpeg':
      return srgb.jpeg({ quality, chromaSubsampling: quality >= 90 ? '4:4:4' : '4:2:0' });
    case 'png':
      return srgb.png({ compressionLevel: 9 });
    case 'webp':
      return srgb.webp({ quality });
  }
}

/**
 * The window of the canvas aspect that centres the product: as large as the photo allows around
 * the product, never smaller than the product plus a 5% margin (none beyond a side the product is
 * cut by). On an axis where the product touches the photo's edge (a cropped model), the window is
 * aligned to that edge instead, so the padding never smears a cut-off garment.
 */
export function canvasWindow(sw: number, sh: number, box: Box | null, aspect: number): Box {
  const b = box ?? fullBox(sw, sh);
  const cx = b.left + b.width / 2;
  const cy = b.top + b.height / 2;
  const touchesX = b.left <= 0 || b.left + b.width >= sw;
  const touchesY = b.top <= 0 || b.top + b.height >= sh;
  // No margin across a side the product is cut by: padding beyond it would float a head or legs
  // cut at the frame in blank backdrop.
  const margin = (low: boolean, high: boolean) => 1 + (low ? 0 : 0.05) + (high ? 0 : 0.05);
  const needW = Math.max(
    b.width * margin(b.left <= 0, b.left + b.width >= sw),
    b.height * margin(b.top <= 0, b.top + b.height >= sh) * aspect,
  );
  const roomW = Math.min(2 * cx, 2 * (sw - cx), 2 * cy * aspect, 2 * (sh - cy) * aspect);
  let width = Math.max(needW, roomW);
  // Cropped products: use the whole photo rather than a small centred window.
  if (touchesX || touchesY) width = Math.max(width, Math.min(sw, sh * aspect));
  width = Math.round(width);
  const height = Math.round(width / aspect);
  return {
    left: Math.round(place(cx, width, sw, b.left <= 0, b.left + b.width >= sw)),
    top: Math.round(place(cy, height, sh, b.top <= 0, b.top + b.height >= sh)),
    width,
    height,
  };
}

/**
 * The largest window of `aspect` inside the photo, centred on the product as far as the frame
 * allows. A product taller than the window keeps its top: a person cut there loses the feet, not
 * the face (centring cut 01008_00 through the eyes).
 */
export function insideWindow(sw: number, sh: number, box: Box | null, aspect: number): Box {
  const b = box ?? fullBox(sw, sh);
  const width = Math.max(1, Math.round(Math.min(sw, sh * aspect)));
  const height = Math.max(1, Math.min(sh, Math.round(width / aspect)));
  const left = Math.round(Math.min(sw - width, Math.max(0, b.left + b.width / 2 - width / 2)));
  const wantTop =
    b.height > height ? b.top - Math.min(0.03 * height, b.top) : b.top + b.height / 2 - height / 2;
  const top = Math.round(Math.min(sh - height, Math.max(0, wantTop)));
  return { left, top, width, height };
}

/**
 * The canvas behind the photo: each side continues its edge's backdrop line outwards (each
 * position takes the line's colour beside it; the corners take the top or bottom line), so the
 * padding meets the photo without a step where the wall is lit unevenly.
 */
function backdropCanvas(
  width: number,
  height: number,
  channels: 3 | 4,
  photo: Box,
  source: { crop: Box; scale: number; sw: number; sh: number },
  lines: Map<Side, { line: Float32Array }>,
): Buffer {
  const out = Buffer.alloc(width * height * channels, 255);
  const { crop, scale, sw, sh } = source;
  const alongX = (x: number) =>
    Math.min(sw - 1, Math.max(0, Math.round(crop.left + (x - photo.left + 0.5) / scale - 0.5)));
  const alongY = (y: number) =>
    Math.min(sh - 1, Math.max(0, Math.round(crop.top + (y - photo.top + 0.5) / scale - 0.5)));
  const paint = (x0: number, y0: number, x1: number, y1: number, side: Side) => {
    const line = lines.get(side)?.line;
    if (!line) return;
    const horizontal = side === 'top' || side === 'bottom';
    for (let y = y0; y < y1; y++)
      for (let x = x0; x < x1; x++) {
        const j = (horizontal ? alongX(x) : alongY(y)) * 4;
        for (let k = 0; k < channels; k++)
          out[(y * width + x) * channels + k] = Math.round(line[j + k]!);
      }
  };
  paint(0, 0, photo.left, height, 'left');
  paint(photo.left + photo.width, 0, width, height, 'right');
  paint(0, 0, width, photo.top, 'top');
  paint(0, photo.top + photo.height, width, height, 'bottom');
  return out;
}

function place(centre: number, size: number, total: number, low: boolean, high: boolean): number {
  if (low && !high) return 0;
  if (high && !low) return total - size;
  return centre - size / 2;
}

function intersect(w: Box, sw: number, sh: number): Box {
  const left = Math.max(0, w.left);
  const top = Math.max(0, w.top);
  const right = Math.min(sw, w.left + w.width);
  const bottom = Math.min(sh, w.top + w.height);
  return { left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) };
}

const fullBox = (width: number, height: number): Box => ({ left: 0, top: 0, width, height });

type SideLine = ReturnType<typeof backdropLine>;

/**
 * The product's box against the left and right backdrop lines, when both are opaque backdrop.
 * The padding beside a wall-floor seam (`seamRows`) then continues the seam as the edge shows
 * it: bridged there as if it were subject, the cove and shadow lines stopped at the photo's edge.
 */
function sideLinesBox(raw: RawImage, left: SideLine, right: SideLine): Box | null {
  if (!left.extendable || !right.extendable) return null;
  const opaque = (line: Float32Array) => line.every((v, j) => j % 4 !== 3 || v >= 128);
  if (!opaque(left.edge) || !opaque(right.edge)) return null;
  const seam = seamRows(left, right, raw.height, DEFAULT_TOLERANCE);
  // Over 5 rows: one row's grain repeated across the padding draws streaks.
  for (const side of [left, right])
    for (let y = 0; y < raw.height; y++) {
      if (!seam[y]) continue;
      const from = Math.max(0, y - 2);
      const to = Math.min(raw.height, y + 3);
      for (let c = 0; c < 4; c++) {
        let sum = 0;
        for (let k = from; k < to; k++) sum += side.raw[k * 4 + c]!;
        side.line[y * 4 + c] = sum / (to - from);
      }
    }
  return productBoxAcrossRows(raw, left, right, DEFAULT_TOLERANCE, seam);
}
