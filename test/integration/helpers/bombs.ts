/**
 * Pixel bombs: small, well-formed files whose headers declare a huge canvas. The PNG is a real,
 * fully decodable 1-bit image (zero rows deflate about 1000:1); the JPEG and WebP are real small
 * images with the frame size in their header rewritten, which is all a decoder reads before it
 * allocates the canvas.
 */
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A valid black 1-bit grayscale PNG of width x height (a few hundred KB at 16000x16000). */
export function bombPng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  // Tiny bombs for the limit checks need no real rows: the header is what is judged.
  const rows =
    width * height <= 100_000_000
      ? Buffer.alloc(0)
      : Buffer.alloc((1 + Math.ceil(width / 8)) * height);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A real JPEG whose SOF header declares width x height (each at most 65535). */
export async function bombJpeg(width: number, height: number): Promise<Buffer> {
  const jpeg = await sharp({
    create: { width: 64, height: 64, channels: 3, background: '#808080' },
  })
    .jpeg()
    .toBuffer();
  let at = 2;
  while (at < jpeg.length) {
    const marker = jpeg[at + 1]!;
    if (marker >= 0xc0 && marker <= 0xc2) {
      jpeg.writeUInt16BE(height, at + 5);
      jpeg.writeUInt16BE(width, at + 7);
      return jpeg;
    }
    at += 2 + jpeg.readUInt16BE(at + 2);
  }
  throw new Error('no SOF marker in the sharp JPEG');
}

/** A real WebP with alpha (extended format) whose VP8X header declares width x height. */
export async function bombWebp(width: number, height: number): Promise<Buffer> {
  const webp = await sharp({
    create: { width: 64, height: 64, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 0.5 } },
  })
    .webp()
    .toBuffer();
  if (webp.toString('latin1', 12, 16) !== 'VP8X')
    throw new Error('sharp did not write an extended WebP');
  webp.writeUIntLE(width - 1, 24, 3);
  webp.writeUIntLE(height - 1, 27, 3);
  return webp;
}
