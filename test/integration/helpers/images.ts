/**
 * Real test images made with sharp, plus byte-signature checks for what the service returns.
 * Everything is generated on the fly (no fixtures on disk) and cached per process.
 */
import sharp from 'sharp';

const cache = new Map<string, Promise<Buffer>>();
function cached(key: string, make: () => Promise<Buffer>): Promise<Buffer> {
  let hit = cache.get(key);
  if (!hit) {
    hit = make();
    cache.set(key, hit);
  }
  return hit;
}

/** A red T-shirt silhouette on a white background (the product photo most tests send). */
function tshirtSvg(width: number, height: number, color = '#d01c1c'): Buffer {
  const w = width;
  const h = height;
  const path = [
    `M ${w * 0.3} ${h * 0.15}`,
    `L ${w * 0.42} ${h * 0.12}`,
    `Q ${w * 0.5} ${h * 0.2} ${w * 0.58} ${h * 0.12}`,
    `L ${w * 0.7} ${h * 0.15}`,
    `L ${w * 0.9} ${h * 0.32}`,
    `L ${w * 0.8} ${h * 0.42}`,
    `L ${w * 0.72} ${h * 0.36}`,
    `L ${w * 0.72} ${h * 0.88}`,
    `L ${w * 0.28} ${h * 0.88}`,
    `L ${w * 0.28} ${h * 0.36}`,
    `L ${w * 0.2} ${h * 0.42}`,
    `L ${w * 0.1} ${h * 0.32}`,
    'Z',
  ].join(' ');
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">` +
      `<rect width="100%" height="100%" fill="#ffffff"/>` +
      `<path d="${path}" fill="${color}" stroke="#7a0d0d" stroke-width="${Math.max(1, w / 200)}"/>` +
      `</svg>`,
  );
}

/** A JPEG of grey noise: it compresses badly, so its size follows its area. Not cached. */
export function noisyJpeg(width: number, height: number): Promise<Buffer> {
  return sharp({
    create: {
      width,
      height,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** 800x1000 JPEG of a red T-shirt on white (the spec-style product photo). */
export function garmentJpeg(width = 800, height = 1000, color = '#d01c1c'): Promise<Buffer> {
  return cached(`garment-jpeg-${width}x${height}-${color}`, () =>
    sharp(tshirtSvg(width, height, color))
      .jpeg({ quality: 85 })
      .toBuffer(),
  );
}

/** Small PNG of the same garment; quick for the local provider. */
export function garmentPng(width = 200, height = 250, color = '#1c4fd0'): Promise<Buffer> {
  return cached(`garment-png-${width}x${height}-${color}`, () =>
    sharp(tshirtSvg(width, height, color))
      .png()
      .toBuffer(),
  );
}

export function garmentWebp(width = 200, height = 250): Promise<Buffer> {
  return cached(`garment-webp-${width}x${height}`, () =>
    sharp(tshirtSvg(width, height, '#1cd04f'))
      .webp()
      .toBuffer(),
  );
}

/** A file with a valid PNG signature whose image data is garbage: any decoder fails on it. */
export function corruptPng(): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const junk = Buffer.alloc(4096);
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 37 + 11) & 0xff;
  return Buffer.concat([signature, junk]);
}

/** A real PNG followed by filler bytes so the whole buffer is exactly `size` bytes; still a PNG by signature. */
export async function paddedPng(size: number): Promise<Buffer> {
  const png = await garmentPng(64, 80);
  if (png.length > size) throw new Error(`base PNG (${png.length} bytes) is larger than ${size}`);
  const out = Buffer.alloc(size, 0);
  png.copy(out, 0);
  return out;
}

export const isPng = (b: Buffer): boolean =>
  b.length > 8 &&
  b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
export const isJpeg = (b: Buffer): boolean =>
  b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
export const isWebp = (b: Buffer): boolean =>
  b.length > 12 &&
  b.subarray(0, 4).toString('latin1') === 'RIFF' &&
  b.subarray(8, 12).toString('latin1') === 'WEBP';
/** ISO-BMFF (MP4): the first box is `ftyp` at byte offset 4. */
export const isMp4 = (b: Buffer): boolean =>
  b.length > 12 && b.subarray(4, 8).toString('latin1') === 'ftyp';
export const isImage = (b: Buffer): boolean => isPng(b) || isJpeg(b) || isWebp(b);

/** Decodes the image with sharp (proves it is a real, readable image, not just a signature). */
export async function imageSize(
  b: Buffer,
): Promise<{ width: number; height: number; format: string; hasAlpha: boolean }> {
  const meta = await sharp(b).metadata();
  return {
    width: meta.width ?? 0,
    height: meta.height ?? 0,
    format: meta.format ?? '',
    hasAlpha: meta.hasAlpha ?? false,
  };
}

/** True when at least one pixel is not fully opaque (a cut-out really has transparency). */
export async function hasTransparentPixels(b: Buffer): Promise<boolean> {
  const { data, info } = await sharp(b).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  for (let i = info.channels - 1; i < data.length; i += info.channels)
    if (data[i]! < 255) return true;
  return false;
}

/** Duration in seconds from the MP4 `mvhd` box (movie header), or null if absent. */
export function mp4DurationSeconds(b: Buffer): number | null {
  const at = b.indexOf(Buffer.from('mvhd', 'latin1'));
  if (at < 0) return null;
  const version = b[at + 4];
  if (version === 1) {
    const timescale = b.readUInt32BE(at + 4 + 4 + 16);
    const duration = Number(b.readBigUInt64BE(at + 4 + 4 + 16 + 4));
    return timescale ? duration / timescale : null;
  }
  const timescale = b.readUInt32BE(at + 4 + 4 + 8);
  const duration = b.readUInt32BE(at + 4 + 4 + 8 + 4);
  return timescale ? duration / timescale : null;
}

/**
 * The rows from a photo's first to one past its last line of detail: a pixel 25 levels off its
 * row's 61-px running mean in 4 or more places (hair, a face, hands, shoes). A wall, a floor and
 * the seam between them are smooth along a row. `top` = `bottom` = `height` when there is none.
 */
export async function detailRows(
  image: Buffer,
): Promise<{ top: number; bottom: number; height: number }> {
  const { data, info } = await sharp(image).greyscale().raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = info;
  const busy = (y: number): boolean => {
    const prefix = new Float64Array(w + 1);
    for (let x = 0; x < w; x++) prefix[x + 1] = prefix[x]! + data[y * w + x]!;
    let off = 0;
    for (let x = 0; x < w; x++) {
      const a = Math.max(0, x - 30);
      const b = Math.min(w, x + 31);
      if (Math.abs(data[y * w + x]! - (prefix[b]! - prefix[a]!) / (b - a)) > 25) off++;
    }
    return off >= 4;
  };
  let top = 0;
  while (top < h && !busy(top)) top++;
  let bottom = h;
  while (bottom > top && !busy(bottom - 1)) bottom--;
  return { top, bottom: top === h ? h : bottom, height: h };
}
