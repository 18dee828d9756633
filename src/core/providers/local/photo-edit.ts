/**
 * photo_edit offline: performs the edits the instruction names (background colour or removal,
 * brightness, recolouring the garment, crop to a ratio, tone) on the real photo, through the
 * product's matte. An instruction it cannot perform is a ProviderError: the job fails and its
 * charge is refunded, so nobody pays for an unchanged photo.
 */
import type { Sharp } from 'sharp';
import { sharp } from '../../../infra/sharp';
import { ProviderError } from '../types';
import { parseInstruction, OFFLINE_EDITS, type Edit, type Rgb } from './edit-instruction';
import { decodeMeta, rgbPixels } from './image-io';
import { removeBackground } from './remove-background';

export type EditedPhoto = { data: Buffer; mime: 'image/jpeg' | 'image/png' };

type Pixels = { rgb: Buffer; width: number; height: number };

const MATTE_EDITS: ReadonlySet<Edit['kind']> = new Set([
  'background',
  'remove-background',
  'background-brightness',
  'recolour',
  'crop',
]);

export async function editPhoto(input: Buffer, instruction: string): Promise<EditedPhoto> {
  await decodeMeta(input);
  const { edits, unsupported } = parseInstruction(instruction);
  if (unsupported.length > 0 || edits.length === 0) {
    const what =
      unsupported.length > 0
        ? unsupported.map((u) => `"${u}"`).join(', ')
        : `"${instruction.trim()}"`;
    throw new ProviderError(
      `the offline editor cannot do ${what} (the charge is refunded). It can: ${OFFLINE_EDITS}`,
    );
  }
  const { data: original, width, height } = await rgbPixels(input);
  let rgb: Buffer = original;
  let alpha: Buffer | null = null;
  const replacesBackground = edits.some(
    (e) => e.kind === 'background' || e.kind === 'remove-background',
  );
  if (edits.some((e) => MATTE_EDITS.has(e.kind))) {
    // The cut-out's colours are decontaminated at the edge: no halo of the old backdrop on a new one.
    const cut = await sharp(await removeBackground(input))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    alpha = Buffer.alloc(width * height);
    const decontaminated = Buffer.alloc(width * height * 3);
    for (let i = 0; i < width * height; i++) {
      for (let c = 0; c < 3; c++) decontaminated[i * 3 + c] = cut.data[i * 4 + c]!;
      alpha[i] = cut.data[i * 4 + 3]!;
    }
    if (replacesBackground) rgb = decontaminated;
  }
  for (const edit of edits) if (edit.kind === 'recolour') rgb = recolour(rgb, alpha!, edit.colour);
  rgb = await tone({ rgb, width, height }, edits);

  let out: Buffer = rgb;
  let channels: 3 | 4 = 3;
  for (const edit of edits) {
    if (edit.kind === 'background') out = overColour(out, alpha!, edit.colour);
    if (edit.kind === 'background-brightness') out = scaleBackground(out, alpha!, edit.factor);
    if (edit.kind === 'remove-background') {
      out = withAlpha(out, alpha!);
      channels = 4;
    }
  }
  let img = sharp(out, { raw: { width, height, channels } });
  const crop = edits.find((e): e is Extract<Edit, { kind: 'crop' }> => e.kind === 'crop');
  if (crop)
    img = sharp(await img.raw().toBuffer(), { raw: { width, height, channels } }).extract(
      cropWindow(alpha!, width, height, crop.ratio),
    );
  if (channels === 4) return { data: await img.png().toBuffer(), mime: 'image/png' };
  return {
    data: await img.jpeg({ quality: 92, chromaSubsampling: '4:4:4' }).toBuffer(),
    mime: 'image/jpeg',
  };
}

/** Tone edits on the whole photo, in the order they were asked. */
async function tone(px: Pixels, edits: Edit[]): Promise<Buffer> {
  const steps = edits.filter((e) =>
    ['brightness', 'contrast', 'saturation', 'temperature', 'monochrome', 'sharpen'].includes(
      e.kind,
    ),
  );
  if (steps.length === 0) return px.rgb;
  let img: Sharp = sharp(px.rgb, { raw: { width: px.width, height: px.height, channels: 3 } });
  for (const step of steps) {
    // Each step is materialised: sharp would otherwise reorder chained operations its own way.
    const done =
      step.kind === 'brightness' && step.factor > 1
        ? brighten(await img.raw().toBuffer(), step.factor)
        : await apply(img, step).raw().toBuffer();
    img = sharp(done, { raw: { width: px.width, height: px.height, channels: 3 } });
  }
  return img.raw().toBuffer();
}

/** Where brightening starts to bend highlights down instead of clipping them. */
const HIGHLIGHT_KNEE = 220;

/**
 * Brighter without clipping: a plain gain sent every light level over 255/gain to pure white, and a
 * white garment on a white backdrop went with it (049940_1's blouse 'brighter': only the corset
 * was left). Above the knee, [KNEE, 255 * gain] maps linearly onto [KNEE, 255].
 */
function brighten(rgb: Buffer, gain: number): Buffer {
  const curve = new Uint8Array(256);
  for (let v = 0; v < 256; v++) {
    const y = v * gain;
    curve[v] = Math.round(
      y <= HIGHLIGHT_KNEE
        ? y
        : HIGHLIGHT_KNEE +
            ((255 - HIGHLIGHT_KNEE) * (y - HIGHLIGHT_KNEE)) / (255 * gain - HIGHLIGHT_KNEE),
    );
  }
  const out = Buffer.alloc(rgb.length);
  for (let i = 0; i < rgb.length; i++) out[i] = curve[rgb[i]!]!;
  return out;
}

function apply(img: Sharp, edit: Edit): Sharp {
  switch (edit.kind) {
    case 'brightness':
      return img.modulate({ brightness: edit.factor });
    case 'contrast':
      return img.linear(edit.factor, 128 * (1 - edit.factor));
    case 'saturation':
      return img.modulate({ saturation: edit.factor });
    case 'temperature':
      return img.recomb(
        edit.warmer
          ? [
              [1.06, 0, 0],
              [0, 1.01, 0],
              [0, 0, 0.9],
            ]
          : [
              [0.92, 0, 0],
              [0, 0.99, 0],
              [0, 0, 1.08],
            ],
      );
    case 'monochrome':
      return img.recomb([
        [0.299, 0.587, 0.114],
        [0.299, 0.587, 0.114],
        [0.299, 0.587, 0.114],
      ]);
    case 'sharpen':
      return img.sharpen({ sigma: 1.2 });
    default:
      return img;
  }
}

const luma = (r: number, g: number, b: number) => 0.299 * r + 0.587 * g + 0.114 * b;

/** The subject takes the colour; its own shading (folds, seams, print contrast) is kept as lightness. */
function recolour(rgb: Buffer, alpha: Buffer, colour: Rgb): Buffer {
  const n = alpha.length;
  const lumas: number[] = [];
  for (let i = 0; i < n; i += 7)
    if (alpha[i]! >= 200) lumas.push(luma(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!));
  if (lumas.length === 0)
    throw new ProviderError(
      'the garment could not be found in the photo to recolour it (the charge is refunded)',
    );
  lumas.sort((a, b) => a - b);
  const median = Math.max(8, lumas[lumas.length >> 1]!);
  const out = Buffer.from(rgb);
  for (let i = 0; i < n; i++) {
    const a = alpha[i]! / 255;
    if (a === 0) continue;
    const shade = luma(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!) / median;
    for (let c = 0; c < 3; c++) {
      const v = Math.min(255, colour[c]! * shade);
      out[i * 3 + c] = Math.round(v * a + rgb[i * 3 + c]! * (1 - a));
    }
  }
  return out;
}

function overColour(rgb: Buffer, alpha: Buffer, colour: Rgb): Buffer {
  const out = Buffer.alloc(rgb.length);
  for (let i = 0; i < alpha.length; i++) {
    const a = alpha[i]! / 255;
    for (let c = 0; c < 3; c++)
      out[i * 3 + c] = Math.round(rgb[i * 3 + c]! * a + colour[c]! * (1 - a));
  }
  return out;
}

function scaleBackground(rgb: Buffer, alpha: Buffer, factor: number): Buffer {
  const out = Buffer.alloc(rgb.length);
  for (let i = 0; i < alpha.length; i++) {
    const k = alpha[i]! / 255 + (1 - alpha[i]! / 255) * factor;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.min(255, Math.round(rgb[i * 3 + c]! * k));
  }
  return out;
}

function withAlpha(rgb: Buffer, alpha: Buffer): Buffer {
  const out = Buffer.alloc(alpha.length * 4);
  for (let i = 0; i < alpha.length; i++) {
    out[i * 4] = rgb[i * 3]!;
    out[i * 4 + 1] = rgb[i * 3 + 1]!;
    out[i * 4 + 2] = rgb[i * 3 + 2]!;
    out[i * 4 + 3] = alpha[i]!;
  }
  return out;
}

/**
 * The crop: for a ratio, the largest window of that ratio inside the photo, centred on the
 * product (moved inwards at the edges); without one, the product's box with a 5% margin.
 */
export function cropWindow(
  alpha: Buffer,
  width: number,
  height: number,
  ratio: number | null,
): { left: number; top: number; width: number; height: number } {
  let minX = width,
    minY = height,
    maxX = -1,
    maxY = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (alpha[y * width + x]! < 128) continue;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
  }
  const found = maxX >= 0;
  const cx = found ? (minX + maxX + 1) / 2 : width / 2;
  const cy = found ? (minY + maxY + 1) / 2 : height / 2;
  let w: number;
  let h: number;
  if (ratio === null) {
    if (!found)
      throw new ProviderError(
        'no product was found in the photo to crop around (the charge is refunded)',
      );
    const margin = 0.05 * Math.max(maxX - minX, maxY - minY);
    w = Math.min(width, maxX - minX + 1 + 2 * margin);
    h = Math.min(height, maxY - minY + 1 + 2 * margin);
  } else {
    w = Math.min(width, height * ratio);
    h = w / ratio;
  }
  const cw = Math.max(1, Math.round(w));
  const ch = Math.max(1, Math.min(height, Math.round(h)));
  const left = Math.round(Math.min(width - cw, Math.max(0, cx - cw / 2)));
  const top = Math.round(Math.min(height - ch, Math.max(0, cy - ch / 2)));
  return { left, top, width: cw, height: ch };
}
