import { fileTypeFromBuffer } from 'file-type';

export const IMAGE_MIMES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export type ImageMime = (typeof IMAGE_MIMES)[number];

/** The image format by file signature (never by the declared Content-Type), or null. */
export async function sniffImage(data: Uint8Array): Promise<ImageMime | null> {
  const type = await fileTypeFromBuffer(data);
  return type && (IMAGE_MIMES as readonly string[]).includes(type.mime) ? (type.mime as ImageMime) : null;
}

export const extensionFor = (mime: string): string =>
  ({ 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'video/mp4': 'mp4' })[mime] ?? 'bin';
