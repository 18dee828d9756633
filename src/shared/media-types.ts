/**
 * Every media type Dropshoot reads, stores, sends or serves, in one table: the MIME type, the
 * short format name our sniffers and export settings use, the file extensions (the first is the
 * one we write) and whether it is an image or a video. Other modules pick from it; the compiler
 * refuses a MIME type or format that is not here.
 */
type MediaTypeEntry = {
  format: string;
  extensions: readonly [string, ...string[]];
  kind: 'image' | 'video';
};

export const MEDIA_TYPES = {
  'image/jpeg': { format: 'jpeg', extensions: ['jpg', 'jpeg'], kind: 'image' },
  'image/png': { format: 'png', extensions: ['png'], kind: 'image' },
  'image/webp': { format: 'webp', extensions: ['webp'], kind: 'image' },
  'image/gif': { format: 'gif', extensions: ['gif'], kind: 'image' },
  'image/avif': { format: 'avif', extensions: ['avif'], kind: 'image' },
  'image/heic': { format: 'heic', extensions: ['heic', 'heif'], kind: 'image' },
  'image/tiff': { format: 'tiff', extensions: ['tif', 'tiff'], kind: 'image' },
  'video/mp4': { format: 'mp4', extensions: ['mp4'], kind: 'video' },
  'video/quicktime': { format: 'mov', extensions: ['mov'], kind: 'video' },
  'video/webm': { format: 'webm', extensions: ['webm'], kind: 'video' },
} as const satisfies Record<string, MediaTypeEntry>;

export type MediaMime = keyof typeof MEDIA_TYPES;
export type MediaFormat = (typeof MEDIA_TYPES)[MediaMime]['format'];
export type MediaKind = MediaTypeEntry['kind'];

/** What the service takes as an upload and as an input image (spec 4.5), judged by signature. */
export const UPLOAD_MIMES = [
  'image/jpeg',
  'image/png',
  'image/webp',
] as const satisfies readonly MediaMime[];
export type UploadMime = (typeof UPLOAD_MIMES)[number];

export function isUploadMime(mime: string): mime is UploadMime {
  return (UPLOAD_MIMES as readonly string[]).includes(mime);
}

/** The extension we write for a type, without the dot (`jpg` for JPEG). */
export function extensionFor(mime: MediaMime): string {
  return MEDIA_TYPES[mime].extensions[0];
}

const BY_FORMAT = new Map<string, MediaMime>(
  Object.entries(MEDIA_TYPES).map(([mime, entry]) => [entry.format, mime as MediaMime]),
);
const BY_EXTENSION = new Map<string, MediaMime>(
  Object.entries(MEDIA_TYPES).flatMap(([mime, entry]) =>
    entry.extensions.map((ext) => [ext, mime as MediaMime] as const),
  ),
);

/** The MIME type of a format name (`jpeg` -> `image/jpeg`). */
export type MimeOfFormat<F extends MediaFormat> = {
  [M in MediaMime]: (typeof MEDIA_TYPES)[M]['format'] extends F ? M : never;
}[MediaMime];

export function mimeOfFormat<F extends MediaFormat>(format: F): MimeOfFormat<F> {
  return BY_FORMAT.get(format) as MimeOfFormat<F>;
}

/** The type a file name's extension says (any case), or null for one not in the table. */
export function mimeOfPath(file: string): MediaMime | null {
  const dot = file.lastIndexOf('.');
  if (dot < 0 || dot < Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'))) return null;
  return BY_EXTENSION.get(file.slice(dot + 1).toLowerCase()) ?? null;
}
