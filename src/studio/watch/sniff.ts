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
 * A PNG whose writer stopped after the last image data but before IEND decodes cleanly, so
 * libvips cannot tell it is incomplete: require the IEND chunk. (JPEG needs no such check:
 * libvips rejects a missing EOI, and cameras often append data after it.)
 */
export function hasCompleteTrailer(data: Uint8Array, format: SourceFormat): boolean {
  if (format !== 'png') return true;
  const tail = Buffer.from(data.subarray(Math.max(0, data.length - 64)));
  return tail.includes('IEND');
}
