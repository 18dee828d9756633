/**
 * What a downloaded result or an upload is, judged by its bytes alone. CDNs and object stores
 * serve results as `application/octet-stream` (or worse), and URLs carry no reliable extension,
 * so neither `Content-Type` nor the URL is ever consulted.
 */
import { z } from 'zod';
import {
  extensionFor,
  MEDIA_TYPES,
  UPLOAD_MIMES,
  type MediaMime as AnyMediaMime,
  type UploadMime,
} from '../shared/media-types';

/** What we store and show as a result: the shared table's types less HEIC and TIFF (not shown by browsers). */
const RESULT_MIMES = [
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/gif',
  'image/avif',
  'video/mp4',
  'video/quicktime',
  'video/webm',
] as const satisfies readonly AnyMediaMime[];

export const MediaTypeSchema = z.object({
  mime: z.enum(RESULT_MIMES),
  ext: z.string(),
  kind: z.enum(['image', 'video']),
});
export type MediaType = z.infer<typeof MediaTypeSchema>;
export type MediaMime = MediaType['mime'];

export type { UploadMime };

const MEDIA = Object.fromEntries(
  RESULT_MIMES.map((mime) => [
    mime,
    { mime, ext: extensionFor(mime), kind: MEDIA_TYPES[mime].kind },
  ]),
) as Readonly<Record<MediaMime, MediaType>>;

export const KNOWN_MEDIA = 'JPEG, PNG, WebP, GIF, AVIF, MP4, MOV or WebM';

const AVIF_BRANDS = new Set(['avif', 'avis']);
const HEIF_BRANDS = new Set([
  'heic',
  'heix',
  'hevc',
  'hevx',
  'heim',
  'heis',
  'hevm',
  'hevs',
  'mif1',
  'msf1',
]);
/** Top-level QuickTime atoms an old .mov may open with instead of `ftyp`. */
const QUICKTIME_ATOMS = new Set(['moov', 'mdat', 'wide', 'free', 'skip', 'pnot']);

const ascii = (data: Uint8Array, from: number, to: number): string =>
  String.fromCharCode(...data.subarray(from, Math.min(to, data.length)));
const at = (data: Uint8Array, i: number): number => data[i] ?? -1;

/** Brands of an ISO base media file (major brand, then compatible brands), or null. */
function isoBrands(data: Uint8Array): string[] | null {
  if (ascii(data, 4, 8) !== 'ftyp') return null;
  const size = ((at(data, 0) << 24) | (at(data, 1) << 16) | (at(data, 2) << 8) | at(data, 3)) >>> 0;
  const end = Math.min(data.length, Math.max(16, size));
  const brands = [ascii(data, 8, 12)];
  for (let i = 16; i + 4 <= end; i += 4) brands.push(ascii(data, i, i + 4));
  return brands;
}

/** The media type from the file signature, or null when it is none we can store and show. */
export function sniffMedia(data: Uint8Array): MediaType | null {
  if (at(data, 0) === 0xff && at(data, 1) === 0xd8 && at(data, 2) === 0xff)
    return MEDIA['image/jpeg'];
  if (ascii(data, 0, 8) === '\x89PNG\r\n\x1a\n') return MEDIA['image/png'];
  if (ascii(data, 0, 4) === 'RIFF' && ascii(data, 8, 12) === 'WEBP') return MEDIA['image/webp'];
  if (ascii(data, 0, 6) === 'GIF87a' || ascii(data, 0, 6) === 'GIF89a') return MEDIA['image/gif'];
  const brands = isoBrands(data);
  if (brands) {
    if (brands.some((b) => AVIF_BRANDS.has(b))) return MEDIA['image/avif'];
    if (brands.some((b) => HEIF_BRANDS.has(b))) return null; // HEIC stills: libvips cannot decode them here
    return brands[0] === 'qt  ' ? MEDIA['video/quicktime'] : MEDIA['video/mp4'];
  }
  if (data.length >= 8 && QUICKTIME_ATOMS.has(ascii(data, 4, 8))) return MEDIA['video/quicktime'];
  if (
    at(data, 0) === 0x1a &&
    at(data, 1) === 0x45 &&
    at(data, 2) === 0xdf &&
    at(data, 3) === 0xa3
  ) {
    // EBML: WebM says so in its DocType near the start; other Matroska files are not accepted.
    if (Buffer.from(data.subarray(0, 64)).includes('webm')) return MEDIA['video/webm'];
  }
  return null;
}

/** The upload MIME type by signature (JPEG, PNG or WebP), or null. */
export function sniffUploadMime(data: Uint8Array): UploadMime | null {
  const media = sniffMedia(data);
  return media && (UPLOAD_MIMES as readonly string[]).includes(media.mime)
    ? (media.mime as UploadMime)
    : null;
}

/** A few words on what unrecognised bytes look like, for an error message a person can act on. */
export function describeBytes(data: Uint8Array): string {
  if (data.length === 0) return 'an empty body';
  const text = ascii(data, 0, 256).trimStart().toLowerCase();
  if (text.startsWith('<!doctype html') || text.startsWith('<html')) return 'an HTML page';
  if (text.startsWith('<?xml') || text.startsWith('<error')) return 'an XML document';
  if (text.startsWith('{') || text.startsWith('[')) return 'JSON';
  if (isoBrands(data)?.some((b) => HEIF_BRANDS.has(b))) return 'a HEIC/HEIF image (not supported)';
  const hex = Buffer.from(data.subarray(0, 8))
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ');
  return `unknown bytes (${hex}…)`;
}

/** A download whose bytes are neither an image nor a video we know; the caller decides its fate. */
export class UnrecognizedMediaError extends Error {
  override name = 'UnrecognizedMediaError';
  constructor(
    /** What was judged, in words: "the file at <url>", "the result of job <id>". */
    readonly source: string,
    readonly servedAs: string | null,
    readonly bytes: number,
    looksLike: string,
  ) {
    super(
      `${source} is not an image or video we can use: it is ${looksLike} (${bytes} bytes` +
        `${servedAs ? `, served as ${servedAs}` : ''}); expected ${KNOWN_MEDIA}`,
    );
  }
}

/**
 * Stills a service may return as results that browsers do not show: a download lets them through
 * and the studio's library stores them converted (TIFF by libvips, HEIC by libheif).
 */
export type ConvertibleMedia = { mime: 'image/tiff' | 'image/heic'; ext: string; kind: 'image' };

/** TIFF (either byte order, classic or BigTIFF) or HEIC by signature, or null. */
export function sniffConvertible(data: Uint8Array): ConvertibleMedia | null {
  const head = ascii(data, 0, 4);
  if (head === 'II*\0' || head === 'MM\0*' || head === 'II+\0' || head === 'MM\0+')
    return { mime: 'image/tiff', ext: extensionFor('image/tiff'), kind: 'image' };
  const brands = isoBrands(data);
  if (brands && !brands.some((b) => AVIF_BRANDS.has(b)) && brands.some((b) => HEIF_BRANDS.has(b)))
    return { mime: 'image/heic', ext: extensionFor('image/heic'), kind: 'image' };
  return null;
}

/** Judges a downloaded file: a known image or video, or a still to convert; else it throws. */
export function judgeDownload(
  data: Buffer,
  source: { what: string; servedAs: string | null },
): MediaType | ConvertibleMedia {
  return sniffMedia(data) ?? sniffConvertible(data) ?? judgeMedia(data, source);
}

/** Judges downloaded bytes; throws UnrecognizedMediaError when they are no known image or video. */
export function judgeMedia(
  data: Buffer,
  source: { what: string; servedAs: string | null },
): MediaType {
  const media = sniffMedia(data);
  if (!media)
    throw new UnrecognizedMediaError(
      source.what,
      source.servedAs,
      data.length,
      describeBytes(data),
    );
  return media;
}
