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
  if (crop) {
    const window = cropWindow(alpha!, width, height, crop.ratio);
    const pixels = await img.raw().toBuffer();
    img = inside(window, width, height)
      ? sharp(pixels, { raw: { width, height, channels } }).extract(window)
      : sharp(padWithBackdrop(pixels, channels, width, height, alpha!, window), {
          raw: { width: window.width, height: window.height, channels },
        });
  }
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
 * product (moved inwards at the edges); without one, the product's box with a 5% margin. A product
 * that does not fit that window (tall trousers in a square) is kept whole: the window grows past
 * the photo, to its box with a 3% margin, padded with the backdrop, instead of cutting it. No
 * margin is added beyond a side the product is cut by, and the window stays aligned to that side.
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
  const touches = {
    left: found && minX <= 0,
    right: found && maxX >= width - 1,
    top: found && minY <= 0,
    bottom: found && maxY >= height - 1,
  };
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
    h = Math.min(height, w / ratio);
    if (found && (maxX - minX + 1 > w || maxY - minY + 1 > h)) {
      const m = 0.03 * Math.max(maxX - minX + 1, maxY - minY + 1);
      const sides = (a: boolean, b: boolean) => (a ? 0 : m) + (b ? 0 : m);
      const needW = Math.max(
        maxX - minX + 1 + sides(touches.left, touches.right),
        (maxY - minY + 1 + sides(touches.top, touches.bottom)) * ratio,
      );
      if (needW > w + 0.5) {
        w = needW;
        h = w / ratio;
      }
    }
  }
  const cw = Math.max(1, Math.round(w));
  const ch = Math.max(1, Math.round(h));
  return {
    left: place(cx, cw, width, touches.left, touches.right),
    top: place(cy, ch, height, touches.top, touches.bottom),
    width: cw,
    height: ch,
  };
}

/** Where a window of `size` starts along an axis of `total`: inside when it fits, else past it. */
function place(centre: number, size: number, total: number, low: boolean, high: boolean): number {
  if (size <= total) return Math.round(Math.min(total - size, Math.max(0, centre - size / 2)));
  if (low && !high) return 0;
  if (high && !low) return total - size;
  return Math.round(centre - size / 2);
}

type Window = { left: number; top: number; width: number; height: number };

const inside = (w: Window, width: number, height: number): boolean =>
  w.left >= 0 && w.top >= 0 && w.left + w.width <= width && w.top + w.height <= height;

/**
 * The window cut from the photo, the part past its edges filled by continuing the backdrop: each
 * side's outer lines, subject pixels (matte) bridged from the backdrop beside them and smoothed,
 * carried outwards position by position; transparent on a cut-out.
 */
function padWithBackdrop(
  pixels: Buffer,
  channels: 3 | 4,
  width: number,
  height: number,
  alpha: Buffer,
  window: Window,
): Buffer {
  const out = Buffer.alloc(window.width * window.height * channels);
  const lines = channels === 4 ? null : backdropLines(pixels, width, height, alpha);
  for (let y = 0; y < window.height; y++) {
    const sy = y + window.top;
    for (let x = 0; x < window.width; x++) {
      const sx = x + window.left;
      const o = (y * window.width + x) * channels;
      if (sx >= 0 && sy >= 0 && sx < width && sy < height) {
        pixels.copy(out, o, (sy * width + sx) * channels, (sy * width + sx + 1) * channels);
        continue;
      }
      if (!lines) continue; // a cut-out: transparent
      const clampX = Math.min(width - 1, Math.max(0, sx));
      const clampY = Math.min(height - 1, Math.max(0, sy));
      const [line, j] =
        sy < 0
          ? [lines.top, clampX]
          : sy >= height
            ? [lines.bottom, clampX]
            : sx < 0
              ? [lines.left, clampY]
              : [lines.right, clampY];
      for (let c = 0; c < 3; c++) out[o + c] = Math.round(line[j * 3 + c]!);
    }
  }
  return out;
}

/** Each side's backdrop along the photo's edge (RGB per position), from its 3 outer lines. */
function backdropLines(
  pixels: Buffer,
  width: number,
  height: number,
  alpha: Buffer,
): Record<'top' | 'bottom' | 'left' | 'right', Float32Array> {
  const border: number[][] = [[], [], []];
  const sideLine = (n: number, at: (j: number, k: number) => number): Float32Array => {
    const sum = new Float64Array(n * 3);
    const count = new Uint32Array(n);
    for (let j = 0; j < n; j++)
      for (let k = 0; k < 3; k++) {
        const i = at(j, k);
        if (alpha[i]! >= 64) continue;
        for (let c = 0; c < 3; c++) {
          sum[j * 3 + c] = sum[j * 3 + c]! + pixels[i * 3 + c]!;
          border[c]!.push(pixels[i * 3 + c]!);
        }
        count[j] = count[j]! + 1;
      }
    return bridgeAndSmooth(sum, count, n);
  };
  const raw = {
    top: sideLine(width, (x, k) => k * width + x),
    bottom: sideLine(width, (x, k) => (height - 1 - k) * width + x),
    left: sideLine(height, (y, k) => y * width + k),
    right: sideLine(height, (y, k) => y * width + width - 1 - k),
  };
  // A side with no backdrop at all takes the median of the whole border's backdrop (or white).
  const fallback = border.map((v) =>
    v.length === 0 ? 255 : v.sort((a, b) => a - b)[v.length >> 1]!,
  );
  for (const line of Object.values(raw))
    if (Number.isNaN(line[0])) for (let i = 0; i < line.length; i++) line[i] = fallback[i % 3]!;
  return raw;
}

/** Per-position means where there are samples, interpolated across the gaps, then a 61-px mean. */
function bridgeAndSmooth(sum: Float64Array, count: Uint32Array, n: number): Float32Array {
  const known: number[] = [];
  for (let j = 0; j < n; j++) if (count[j]! > 0) known.push(j);
  const line = new Float32Array(n * 3);
  if (known.length === 0) return line.fill(NaN);
  let k = 0;
  for (let j = 0; j < n; j++) {
    while (k + 1 < known.length && known[k + 1]! <= j) k++;
    const a = known[k]!;
    const b = known[Math.min(known.length - 1, k + 1)]!;
    for (let c = 0; c < 3; c++) {
      const va = sum[a * 3 + c]! / count[a]!;
      const vb = sum[b * 3 + c]! / count[b]!;
      line[j * 3 + c] = j <= a || b === a ? va : j >= b ? vb : va + ((vb - va) * (j - a)) / (b - a);
    }
  }
  const smooth = new Float32Array(n * 3);
  const r = 30;
  for (let c = 0; c < 3; c++) {
    const prefix = new Float64Array(n + 1);
    for (let j = 0; j < n; j++) prefix[j + 1] = prefix[j]! + line[j * 3 + c]!;
    for (let j = 0; j < n; j++) {
      const a = Math.max(0, j - r);
      const b = Math.min(n, j + r + 1);
      smooth[j * 3 + c] = (prefix[b]! - prefix[a]!) / (b - a);
    }
  }
  return smooth;
}
