/** File signatures (spec 4.5) and the result images the reference service hands back. */
import sharp, { type Sharp } from 'sharp';

export type ImageKind = {
  mime: 'image/jpeg' | 'image/png' | 'image/webp';
  ext: 'jpg' | 'png' | 'webp';
};

export function sniffImage(bytes: Buffer): ImageKind | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
    return { mime: 'image/jpeg', ext: 'jpg' };
  if (
    bytes.length >= 8 &&
    bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  )
    return { mime: 'image/png', ext: 'png' };
  if (
    bytes.length >= 12 &&
    bytes.toString('latin1', 0, 4) === 'RIFF' &&
    bytes.toString('latin1', 8, 12) === 'WEBP'
  )
    return { mime: 'image/webp', ext: 'webp' };
  return null;
}

/**
 * A real, decodable result: the product photo scaled down and tinted per tool and index, so two
 * results never share bytes. Without a usable product photo, a flat colour card.
 */
export async function makeResultImage(
  input: Buffer | null,
  seed: string,
  index: number,
  format: 'jpeg' | 'png' | 'tiff',
): Promise<Buffer> {
  let hash = 0;
  for (const ch of `${seed}#${index}`) hash = (Math.imul(hash, 31) + ch.charCodeAt(0)) >>> 0;
  const tint = { r: hash & 0xff, g: (hash >>> 8) & 0xff, b: (hash >>> 16) & 0xff };
  let image: Sharp;
  try {
    if (!input) throw new Error('no input');
    image = sharp(input, { failOn: 'error' })
      .rotate()
      .resize(320, 320, { fit: 'inside' })
      .tint(tint);
    await image.clone().metadata();
  } catch {
    image = sharp({ create: { width: 240, height: 300, channels: 3, background: tint } });
  }
  // A small label-free marker in one corner keeps results of the same photo distinct.
  const marker = await sharp({
    create: {
      width: 8,
      height: 8,
      channels: 3,
      background: { r: (hash >>> 24) & 0xff, g: index * 40, b: 255 - index * 40 },
    },
  })
    .png()
    .toBuffer();
  const composed = image.composite([{ input: marker, top: 0, left: 0 }]);
  if (format === 'tiff') return composed.tiff().toBuffer();
  return format === 'png' ? composed.png().toBuffer() : composed.jpeg({ quality: 82 }).toBuffer();
}

/**
 * ai_videos result: a minimal ISO BMFF (MP4) file with an `ftyp` box and a `free` box carrying the
 * job id. Valid container bytes, not a playable video: enough for a client that stores videos.
 */
export function makeVideoBytes(seed: string): Buffer {
  const ftyp = Buffer.concat([
    Buffer.from([0, 0, 0, 24]),
    Buffer.from('ftypisom'),
    Buffer.from([0, 0, 2, 0]),
    Buffer.from('isommp41'),
  ]);
  const payload = Buffer.from(seed, 'utf8');
  const size = Buffer.alloc(4);
  size.writeUInt32BE(8 + payload.length);
  return Buffer.concat([ftyp, size, Buffer.from('free'), payload]);
}
