/**
 * Image dimensions read from the file header alone (PNG IHDR, JPEG SOFn, WebP VP8/VP8L/VP8X), so
 * a small file that declares a huge canvas (a pixel bomb) is refused before anything decodes it.
 * A header we cannot read gives null: the signature already passed, and a damaged file fails
 * later in the job, refunded.
 */
import { BadRequest } from '../errors';

export type Dimensions = { width: number; height: number };

/** 64 megapixels: above any camera or phone photo we expect, and above photo_enhance's 50 MP output. */
export const MAX_INPUT_PIXELS = 64 * 1024 * 1024;

export function imageDimensions(data: Uint8Array): Dimensions | null {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (
    bytes.length >= 24 &&
    bytes.readUInt32BE(0) === 0x89504e47 &&
    bytes.toString('latin1', 12, 16) === 'IHDR'
  ) {
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegDimensions(bytes);
  if (
    bytes.length >= 30 &&
    bytes.toString('latin1', 0, 4) === 'RIFF' &&
    bytes.toString('latin1', 8, 12) === 'WEBP'
  ) {
    return webpDimensions(bytes);
  }
  return null;
}

// SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
const isStartOfFrame = (marker: number) =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function jpegDimensions(bytes: Buffer): Dimensions | null {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan data before any frame header
    const length = bytes.readUInt16BE(at + 2);
    if (length < 2) return null;
    if (isStartOfFrame(marker)) {
      if (at + 9 > bytes.length) return null;
      return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return null;
}

function webpDimensions(bytes: Buffer): Dimensions | null {
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8X') {
    return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  }
  if (chunk === 'VP8 ') {
    // Key frame start code 9d 01 2a, then 14-bit width and height (2 scaling bits above each).
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return null;
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  }
  if (chunk === 'VP8L') {
    if (bytes[20] !== 0x2f) return null;
    const bits = bytes.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
  }
  return null;
}

/** 400 when the header declares more than MAX_INPUT_PIXELS; `what` names the image in the message. */
export function assertPixelLimit(data: Uint8Array, what: string): void {
  const size = imageDimensions(data);
  if (!size) return;
  const pixels = size.width * size.height;
  if (pixels > MAX_INPUT_PIXELS) {
    throw new BadRequest(
      `${what} is ${size.width}x${size.height} pixels (${(pixels / 1e6).toFixed(1)} megapixels); ` +
        `the limit is ${MAX_INPUT_PIXELS / (1024 * 1024)} megapixels (${MAX_INPUT_PIXELS} pixels)`,
    );
  }
}
