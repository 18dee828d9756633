import sharp from 'sharp';
import type { Sharp } from 'sharp';
import {
  effectiveFormat,
  PRESETS,
  type ExportSettings,
  type OutputFormat,
} from './presets';
import {
  DEFAULT_TOLERANCE,
  estimateBackground,
  productBox,
  whitenBackground,
  type Box,
  type RawImage,
} from './product-bbox';

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
};

// Results are moved and deleted by the studio; libvips' file cache would keep them open.
sharp.cache({ files: 0 });

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
  const raw = await decode(input, flatten);
  const { width: sw, height: sh } = raw;
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
      const bg = estimateBackground(raw);
      whitenBackground(raw, bg);
      const box = productBox(raw, { r: 255, g: 255, b: 255 }, 8) ?? fullBox(sw, sh);
      const scale = (framing.fill * framing.longestSide) / Math.max(box.width, box.height);
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
      pipeline = sharp(raw.data, { raw: { width: sw, height: sh, channels: raw.channels } })
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
      const bg = estimateBackground(raw);
      const box = productBox(raw, bg, DEFAULT_TOLERANCE);
      const w = canvasWindow(sw, sh, box, framing.width / framing.height);
      const scale = framing.width / w.width;
      const crop = intersect(w, sw, sh);
      const cw = Math.max(1, Math.round(crop.width * scale));
      const ch = Math.max(1, Math.round(crop.height * scale));
      const left = Math.round((crop.left - w.left) * scale);
      const top = Math.round((crop.top - w.top) * scale);
      const right = Math.max(0, framing.width - cw - left);
      const bottom = Math.max(0, framing.height - ch - top);
      if (left + right + top + bottom > 0) notes.push('Background continued to pad the frame');
      if (scale > 1) notes.push(`Upscaled ${scale.toFixed(2)}×`);
      pipeline = pixels
        .extract(crop)
        .resize(cw, ch, { fit: 'fill' })
        // `copy` repeats the edge pixels: the studio sweep continues instead of a hard band.
        .extend({ top, bottom, left, right, extendWith: 'copy' });
      width = cw + left + right;
      height = ch + top + bottom;
      if (width !== framing.width || height !== framing.height) {
        // Rounding overshoot of a pixel: trim back to the exact canvas.
        const buffer = await pipeline.raw().toBuffer({ resolveWithObject: true });
        pipeline = sharp(buffer.data, {
          raw: { width: buffer.info.width, height: buffer.info.height, channels: raw.channels },
        }).extract({ left: 0, top: 0, width: framing.width, height: framing.height });
        width = framing.width;
        height = framing.height;
      }
      break;
    }
  }
  const data = await encode(pipeline, format, settings.quality).toBuffer();
  return { data, format, width, height, sourceWidth: sw, sourceHeight: sh, notes };
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
 * the product, never smaller than the product plus a 5% margin. On an axis where the product
 * touches the photo's edge (a cropped model), the window is aligned to that edge instead, so the
 * padding never smears a cut-off garment.
 */
export function canvasWindow(sw: number, sh: number, box: Box | null, aspect: number): Box {
  const b = box ?? fullBox(sw, sh);
  const cx = b.left + b.width / 2;
  const cy = b.top + b.height / 2;
  const needW = Math.max(b.width * 1.1, b.height * 1.1 * aspect);
  const roomW = Math.min(2 * cx, 2 * (sw - cx), 2 * cy * aspect, 2 * (sh - cy) * aspect);
  let width = Math.max(needW, roomW);
  // Cropped products: use the whole photo rather than a small centred window.
  const touchesX = b.left <= 0 || b.left + b.width >= sw;
  const touchesY = b.top <= 0 || b.top + b.height >= sh;
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
