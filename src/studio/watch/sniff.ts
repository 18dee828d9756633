import path from 'node:path';
import { z } from 'zod';
import { MEDIA_TYPES, mimeOfPath, type MediaFormat } from '../../shared/media-types';

/** Photos a hot folder takes (named as in the shared media table); HEIC/AVIF/TIFF are converted before upload. */
export const SOURCE_FORMATS = [
  'jpeg',
  'png',
  'webp',
  'heic',
  'avif',
  'tiff',
] as const satisfies readonly MediaFormat[];
export const SourceFormatSchema = z.enum(SOURCE_FORMATS);
export type SourceFormat = z.infer<typeof SourceFormatSchema>;

/** A photo a hot folder or `run` would take, by its name alone (the bytes are judged later). */
export function isSourcePhotoName(name: string): boolean {
  const mime = mimeOfPath(name);
  return mime !== null && (SOURCE_FORMATS as readonly string[]).includes(MEDIA_TYPES[mime].format);
}

/** Image formats a studio's photos come in that Dropshoot does not take (camera raw, layered, vector...). */
const UNTAKEN_IMAGE_EXTENSIONS: Readonly<Record<string, string>> = {
  gif: 'GIF',
  bmp: 'BMP',
  psd: 'Photoshop',
  psb: 'Photoshop',
  jxl: 'JPEG XL',
  jp2: 'JPEG 2000',
  svg: 'SVG',
  eps: 'EPS',
  ai: 'Illustrator',
  dng: 'camera raw (DNG)',
  cr2: 'camera raw (CR2)',
  cr3: 'camera raw (CR3)',
  nef: 'camera raw (NEF)',
  arw: 'camera raw (ARW)',
  orf: 'camera raw (ORF)',
  raf: 'camera raw (RAF)',
  rw2: 'camera raw (RW2)',
};

/**
 * Why an image `run` finds is not taken, by its name (a GIF or a camera raw among the photos), or
 * null for a photo it takes and for files that are not images (notes, spreadsheets).
 */
export function untakenImageReason(name: string): string | null {
  const format = UNTAKEN_IMAGE_EXTENSIONS[path.extname(name).slice(1).toLowerCase()];
  return format
    ? `${format} is not a format Dropshoot takes (JPEG, PNG, WebP, HEIC, AVIF or TIFF): save it as JPEG or PNG first`
    : null;
}

const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'hevm', 'hevs']);
const AVIF_BRANDS = new Set(['avif', 'avis']);

/** The image format from the file signature (never from the extension), or null. */
export function sniffFormat(head: Uint8Array): SourceFormat | null {
  const at = (i: number): number => head[i] ?? -1;
  const ascii = (from: number, to: number): string =>
    String.fromCharCode(...head.subarray(from, to));
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'jpeg';
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(0, 4) === 'II*\0' || ascii(0, 4) === 'MM\0*') return 'tiff';
  if (ascii(4, 8) === 'ftyp') {
    // Major brand first, then the compatible brands: `mif1` files say which codec they hold there.
    const size = Math.min(head.length, (at(0) << 24) | (at(1) << 16) | (at(2) << 8) | at(3));
    const brands = [ascii(8, 12)];
    for (let i = 16; i + 4 <= size; i += 4) brands.push(ascii(i, i + 4));
    if (brands.some((b) => AVIF_BRANDS.has(b))) return 'avif';
    if (brands.some((b) => HEIC_BRANDS.has(b))) return 'heic';
  }
  return null;
}

/**
 * Whether the file holds its whole image. A PNG whose writer stopped after the last image data but
 * before IEND decodes cleanly, so libvips cannot tell it is incomplete: require the IEND chunk. A
 * JPEG must reach its end-of-image marker: libvips takes a missing EOI as a warning, and a copy
 * whose second half is zeros (a preallocated file written in part) can decode without a Huffman
 * error (2 of the 69 eval photos did). Data after EOI is fine (cameras append trailers). A WebP
 * must be whole chunks and hold no run of zeros in its image data (webpChunksComplete).
 */
export function hasCompleteTrailer(data: Uint8Array, format: SourceFormat): boolean {
  if (format === 'jpeg') return jpegReachesEndOfImage(data);
  if (format === 'webp') return webpChunksComplete(data);
  if (format !== 'png') return true;
  const tail = Buffer.from(data.subarray(Math.max(0, data.length - 64)));
  return tail.includes('IEND');
}

/**
 * Walks a JPEG from SOI: marker segments by their lengths, each scan's entropy-coded data to the
 * next marker (0xFF00 is a stuffed byte, 0xFFD0-D7 restart markers, 0xFF 0xFF fill), until EOI.
 * Stray bytes between segments (libjpeg's "extraneous bytes", a warning) are skipped the same way.
 * Zeros where data should be never form a marker, so a zeroed tail runs off the end: false.
 */
export function jpegReachesEndOfImage(data: Uint8Array): boolean {
  if (data[0] !== 0xff || data[1] !== 0xd8) return false;
  let at = 2;
  for (;;) {
    at = nextMarker(data, at);
    if (at < 0) return false;
    const marker = data[at + 1]!;
    if (marker === 0xd9) return true;
    // Standalone markers (TEM, RSTn) carry no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (at + 3 >= data.length) return false;
    const length = (data[at + 2]! << 8) | data[at + 3]!;
    if (length < 2) return false;
    at += 2 + length;
    // After SOS comes entropy-coded data: nextMarker skips it to the marker that ends it.
  }
}

/** Where the next marker (0xFF then a byte that is not 0x00, RSTn or 0xFF) starts, or -1. */
function nextMarker(data: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    const ff = data.indexOf(0xff, at);
    if (ff < 0 || ff + 1 >= data.length) return -1;
    const next = data[ff + 1]!;
    if (next === 0x00 || next === 0xff || (next >= 0xd0 && next <= 0xd7)) at = ff + 1;
    else return ff;
  }
}

/**
 * Entropy-coded image data does not hold this many zero bytes in a row (the eval photos as WebP,
 * lossy, lossless and with alpha: 105 at the most); a preallocated copy written in part does.
 */
const ZERO_RUN_IN_CODED_DATA = 1024;
const WEBP_IMAGE_CHUNKS = new Set(['VP8 ', 'VP8L', 'ALPH', 'ANMF']);

/**
 * A WebP's RIFF chunks (size, then payload padded to even) must cover the file as its header says,
 * and its image chunks must hold no long run of zeros: a copy zeroed from the middle on keeps a
 * valid header and often decodes without an error (25 of 40 eval photos as WebP did).
 */
export function webpChunksComplete(data: Uint8Array): boolean {
  if (data.length < 12) return false;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const end = 8 + view.getUint32(4, true);
  if (end > data.length) return false;
  let at = 12;
  while (at + 8 <= end) {
    const fourcc = String.fromCharCode(...data.subarray(at, at + 4));
    const size = view.getUint32(at + 4, true);
    const payloadEnd = at + 8 + size;
    if (payloadEnd > end) return false;
    if (WEBP_IMAGE_CHUNKS.has(fourcc) && hasZeroRun(data, at + 8, payloadEnd)) return false;
    at = payloadEnd + (size % 2);
  }
  // Some writers leave out the last chunk's pad byte.
  return at === end || at === end + 1;
}

function hasZeroRun(data: Uint8Array, from: number, to: number): boolean {
  let run = 0;
  for (let i = from; i < to; i++) {
    run = data[i] === 0 ? run + 1 : 0;
    if (run >= ZERO_RUN_IN_CODED_DATA) return true;
  }
  return false;
}
