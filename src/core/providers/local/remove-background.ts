/**
 * Background removal without a model: product photos are shot on seamless backgrounds (white,
 * grey, coloured, with gradients and vignetting) and people against plain walls, so the
 * background is what is connected to the frame border and close in colour to a smooth estimate
 * of the border. Steps, at a working resolution:
 *  1. a per-pixel background estimate blended from the four border profiles (handles gradients);
 *  2. a perceptual distance (Lab, lightness down-weighted so soft shadows stay background);
 *  3. thresholds set from the border's own noise; flood fill from the border with hysteresis;
 *  4. small specks dropped (components far smaller than the subject), enclosed areas kept;
 *  5. a soft alpha across the boundary band, upsampled to full size and feathered.
 */
import sharp from 'sharp';
import { ProviderError } from '../types';
import { open, rawPixels, type RawImage } from './image-io';

const WORK_SIDE = 768;

export type Matte = { alpha: Uint8Array; width: number; height: number };

function srgbToLinear(c: number): number {
  const v = c / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
}
const LINEAR = Float32Array.from({ length: 256 }, (_, i) => srgbToLinear(i));

/** Lab (D65) per pixel, packed [L, a, b]. */
export function toLab(img: RawImage): Float32Array {
  const n = img.width * img.height;
  const lab = new Float32Array(n * 3);
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  for (let i = 0; i < n; i++) {
    const r = LINEAR[img.data[i * img.channels]!]!;
    const g = LINEAR[img.data[i * img.channels + 1]!]!;
    const b = LINEAR[img.data[i * img.channels + 2]!]!;
    const x = f((r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047);
    const y = f(r * 0.2126 + g * 0.7152 + b * 0.0722);
    const z = f((r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883);
    lab[i * 3] = 116 * y - 16;
    lab[i * 3 + 1] = 500 * (x - y);
    lab[i * 3 + 2] = 200 * (y - z);
  }
  return lab;
}

/** Median of each border's pixels along it (robust to a subject touching the border). */
function borderProfiles(lab: Float32Array, w: number, h: number, band: number) {
  const profile = (length: number, at: (pos: number, depth: number) => number) => {
    const out = new Float32Array(length * 3);
    const window = Math.max(2, Math.round(length / 40));
    for (let pos = 0; pos < length; pos++) {
      for (let c = 0; c < 3; c++) {
        const values: number[] = [];
        for (let p = Math.max(0, pos - window); p <= Math.min(length - 1, pos + window); p += 1) {
          for (let d = 0; d < band; d++) values.push(lab[at(p, d) * 3 + c]!);
        }
        values.sort((a, b) => a - b);
        out[pos * 3 + c] = values[values.length >> 1]!;
      }
    }
    return out;
  };
  return {
    top: profile(w, (x, d) => d * w + x),
    bottom: profile(w, (x, d) => (h - 1 - d) * w + x),
    left: profile(h, (y, d) => y * w + d),
    right: profile(h, (y, d) => y * w + (w - 1 - d)),
  };
}

/** Distance of every pixel to the background estimate. */
function backgroundDistance(lab: Float32Array, w: number, h: number): Float32Array {
  const band = Math.max(2, Math.round(Math.min(w, h) * 0.012));
  const { top, bottom, left, right } = borderProfiles(lab, w, h, band);
  const dist = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const fy = y / (h - 1);
    for (let x = 0; x < w; x++) {
      const fx = x / (w - 1);
      // Inverse-distance weights to the four sides: near a side, that side's profile dominates.
      const wt = 1 / (fy + 0.02) ** 2;
      const wb = 1 / (1 - fy + 0.02) ** 2;
      const wl = 1 / (fx + 0.02) ** 2;
      const wr = 1 / (1 - fx + 0.02) ** 2;
      const sum = wt + wb + wl + wr;
      const i = y * w + x;
      let d = 0;
      for (let c = 0; c < 3; c++) {
        const bg = (top[x * 3 + c]! * wt + bottom[x * 3 + c]! * wb + left[y * 3 + c]! * wl + right[y * 3 + c]! * wr) / sum;
        const delta = lab[i * 3 + c]! - bg;
        // Lightness counts half: shadows and vignetting on a seamless are darker, not another colour.
        d += c === 0 ? 0.25 * delta * delta : delta * delta;
      }
      dist[i] = Math.sqrt(d);
    }
  }
  return dist;
}

function percentile(values: Float32Array, p: number): number {
  const sorted = Float32Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Border pixels' distances: how noisy the background is. */
function borderNoise(dist: Float32Array, w: number, h: number): number {
  const values: number[] = [];
  for (let x = 0; x < w; x++) values.push(dist[x]!, dist[(h - 1) * w + x]!);
  for (let y = 0; y < h; y++) values.push(dist[y * w]!, dist[y * w + w - 1]!);
  return percentile(Float32Array.from(values), 0.9);
}

/** Foreground mask (1 = subject) from distances with hysteresis flood fill from the border. */
function segment(dist: Float32Array, w: number, h: number): Uint8Array {
  const noise = borderNoise(dist, w, h);
  const low = Math.max(5, noise * 1.6);
  const high = Math.max(11, noise * 3.2);
  const background = new Uint8Array(w * h);
  const stack: number[] = [];
  const push = (i: number) => {
    if (!background[i] && dist[i]! < high) {
      background[i] = 1;
      stack.push(i);
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
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % w;
    // Grow through pixels clearly like the background; stop at anything that might be subject.
    const grow = (j: number) => {
      if (!background[j] && dist[j]! < low) {
        background[j] = 1;
        stack.push(j);
      }
    };
    if (x > 0) grow(i - 1);
    if (x < w - 1) grow(i + 1);
    if (i >= w) grow(i - w);
    if (i < w * (h - 1)) grow(i + w);
  }
  openEnclosedHoles(background, dist, w, h, low);
  const fg = new Uint8Array(w * h);
  for (let i = 0; i < fg.length; i++) fg[i] = background[i] ? 0 : 1;
  return keepMainComponents(fg, w, h);
}

/**
 * Holes: a bag handle's loop or a necklace's inside shows the backdrop without touching the
 * border. Enclosed regions that match the backdrop very closely (mean distance well under the
 * threshold) and are not tiny become background too; printed areas of a garment are not that
 * close to the backdrop, so they stay.
 */
function openEnclosedHoles(background: Uint8Array, dist: Float32Array, w: number, h: number, low: number): void {
  const seen = new Uint8Array(w * h);
  const minArea = w * h * 0.002;
  for (let start = 0; start < w * h; start++) {
    if (background[start] || seen[start] || dist[start]! >= low) continue;
    const region: number[] = [start];
    seen[start] = 1;
    let sum = 0;
    for (let k = 0; k < region.length; k++) {
      const i = region[k]!;
      sum += dist[i]!;
      const x = i % w;
      for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i >= w ? i - w : -1, i < w * (h - 1) ? i + w : -1]) {
        if (j >= 0 && !seen[j] && !background[j] && dist[j]! < low) {
          seen[j] = 1;
          region.push(j);
        }
      }
    }
    if (region.length >= minArea && sum / region.length < low * 0.45) for (const i of region) background[i] = 1;
  }
}

/** Drops specks: components smaller than 3% of the largest one. */
function keepMainComponents(mask: Uint8Array, w: number, h: number): Uint8Array {
  const label = new Int32Array(w * h).fill(-1);
  const sizes: number[] = [];
  const stack: number[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || label[start] !== -1) continue;
    const id = sizes.length;
    let size = 0;
    label[start] = id;
    stack.push(start);
    while (stack.length) {
      const i = stack.pop()!;
      size++;
      const x = i % w;
      const neighbours = [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i - w, i + w];
      for (const j of neighbours) {
        if (j >= 0 && j < mask.length && mask[j] && label[j] === -1) {
          label[j] = id;
          stack.push(j);
        }
      }
    }
    sizes.push(size);
  }
  if (sizes.length === 0) return mask;
  const largest = Math.max(...sizes);
  const out = new Uint8Array(w * h);
  for (let i = 0; i < out.length; i++) out[i] = label[i]! >= 0 && sizes[label[i]!]! >= largest * 0.03 ? 1 : 0;
  return out;
}

/** Soft alpha: 255 inside, 0 outside, a ramp on the distance across the boundary band. */
function softAlpha(mask: Uint8Array, dist: Float32Array, w: number, h: number): Uint8Array {
  const noise = borderNoise(dist, w, h);
  const low = Math.max(5, noise * 1.6);
  const alpha = new Uint8Array(w * h);
  for (let i = 0; i < alpha.length; i++) {
    if (!mask[i]) continue;
    const x = i % w;
    const edge = (x > 0 && !mask[i - 1]) || (x < w - 1 && !mask[i + 1]) || (i >= w && !mask[i - w]) || (i < w * (h - 1) && !mask[i + w]);
    alpha[i] = edge ? Math.round(255 * Math.min(1, Math.max(0.35, (dist[i]! - low) / (low * 2)))) : 255;
  }
  return alpha;
}

/** The subject's matte at working resolution (long side 768). */
export async function computeMatte(input: Buffer | string): Promise<Matte> {
  const img = await rawPixels(input, WORK_SIDE, 3);
  if (img.width < 8 || img.height < 8) throw new ProviderError('the image is too small to cut out');
  const dist = backgroundDistance(toLab(img), img.width, img.height);
  const mask = segment(dist, img.width, img.height);
  return { alpha: softAlpha(mask, dist, img.width, img.height), width: img.width, height: img.height };
}

/** The matte scaled to `width` x `height`, feathered: a single-channel 8-bit buffer. */
export async function matteAt(matte: Matte, width: number, height: number): Promise<Buffer> {
  const sigma = Math.max(0.6, Math.min(width, height) / 900);
  return sharp(Buffer.from(matte.alpha), { raw: { width: matte.width, height: matte.height, channels: 1 } })
    .resize(width, height, { kernel: 'linear' })
    .blur(sigma)
    .extractChannel(0) // libvips hands back sRGB otherwise: keep one channel
    .raw()
    .toBuffer();
}

/** Subject bounding box in the matte's coordinates (alpha >= 128), or null when empty. */
export function matteBox(matte: Matte): { left: number; top: number; width: number; height: number } | null {
  let minX = matte.width;
  let minY = matte.height;
  let maxX = -1;
  let maxY = -1;
  for (let y = 0; y < matte.height; y++) {
    for (let x = 0; x < matte.width; x++) {
      if (matte.alpha[y * matte.width + x]! >= 128) {
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
    }
  }
  return maxX < 0 ? null : { left: minX, top: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
}

/** The full-size cut-out: the input's pixels with the matte as alpha, as a transparent PNG. */
export async function removeBackground(input: Buffer): Promise<Buffer> {
  const matte = await computeMatte(input);
  const base = open(input).removeAlpha().toColourspace('srgb');
  const { data, info } = await base.raw().toBuffer({ resolveWithObject: true });
  const alpha = await matteAt(matte, info.width, info.height);
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .joinChannel(alpha, { raw: { width: info.width, height: info.height, channels: 1 } })
    .png({ compressionLevel: 4, adaptiveFiltering: false })
    .toBuffer();
}
