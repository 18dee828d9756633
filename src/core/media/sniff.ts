/**
 * Image format by file signature (never by the declared Content-Type). The spec judges uploads by
 * signature alone, so this checks exactly the magic bytes: a deeper parser would refuse files
 * that are JPEG, PNG or WebP by signature but damaged further in (those fail later, refunded).
 */
import type { UploadMime } from '../../shared/media-types';

/** What the service takes as an image (spec 4.5): the shared table's upload types. */
export type ImageMime = UploadMime;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const startsWith = (data: Uint8Array, bytes: readonly number[], at = 0) =>
  bytes.every((b, i) => data[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

export function sniffImage(data: Uint8Array): ImageMime | null {
  if (startsWith(data, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(data, PNG)) return 'image/png';
  if (startsWith(data, ascii('RIFF')) && startsWith(data, ascii('WEBP'), 8)) return 'image/webp';
  return null;
}
