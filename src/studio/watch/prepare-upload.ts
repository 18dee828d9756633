import fs from 'node:fs/promises';
import { sharp } from '../../infra/sharp';
import { isUploadMime, mimeOfFormat, type UploadMime } from '../../shared/media-types';
import type { Metadata, Sharp } from 'sharp';
import { iccDescription, isSrgbProfile } from '../export/icc';
import { sniffFormat, type SourceFormat } from './sniff';
import { heicToPng } from './heic';
import { CAN_DECODE_HEIC } from './stable-file';

/**
 * The service's upload limit: spec 4.5's "Maximum 8 MB" in its own (decimal) unit. Planned as
 * 8 MiB, a photo of 8,000,001 to 8,388,608 bytes went as it was and a service counting 8 MB as
 * 8,000,000 bytes refused it 413 every run (review rev27 D2).
 */
export const UPLOAD_LIMIT_BYTES = 8_000_000;

export type { UploadMime };
export type PreparedUpload = {
  data: Buffer;
  mime: UploadMime;
  /** What was changed, for the item's log; empty when the original bytes are sent. */
  converted: string[];
};

/** The photo cannot be made acceptable to the service; the message is meant for the user. */
export class UnsupportedImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedImageError';
  }
}

/** The upload type a source format is sent as unchanged, or null when it must be converted. */
function acceptedAsIs(format: SourceFormat): UploadMime | null {
  const mime = mimeOfFormat(format);
  return isUploadMime(mime) ? mime : null;
}
const QUALITY_STEPS = [90, 85, 80, 75, 70] as const;
const MIN_LONG_SIDE = 512;

/**
 * Makes a photo acceptable to the service: JPEG, PNG or WebP, at most 8 MB, sRGB. Photos that
 * already are go through byte for byte; others are converted (HEIC/AVIF/TIFF to JPEG, other
 * colour spaces to sRGB, oversized files re-encoded as JPEG at lower quality, then smaller).
 */
export async function prepareUpload(
  input: string | Buffer,
  options: { maxBytes?: number } = {},
): Promise<PreparedUpload> {
  const maxBytes = options.maxBytes ?? UPLOAD_LIMIT_BYTES;
  const original = typeof input === 'string' ? await fs.readFile(input) : input;
  const format = sniffFormat(original.subarray(0, 64));
  if (!format)
    throw new UnsupportedImageError('Not a supported image: JPEG, PNG, WebP, HEIC, AVIF or TIFF');
  // libvips has no HEVC decoder: HEIC is decoded apart, to a lossless PNG with its colour profile.
  const data = format === 'heic' && !CAN_DECODE_HEIC ? await decodeHeic(original) : original;
  let meta: Metadata;
  try {
    meta = await sharp(data).metadata();
  } catch (error) {
    throw new UnsupportedImageError(
      `Cannot read the ${format.toUpperCase()} image: ${(error as Error).message}`,
    );
  }

  const converted: string[] = [];
  const acceptedMime = acceptedAsIs(format);
  if (!acceptedMime) converted.push(`${format.toUpperCase()} converted to JPEG`);
  const colour = colourNote(meta);
  if (colour) converted.push(colour);
  if (acceptedMime && !colour && data.length <= maxBytes) {
    // data is the original here: only HEIC is ever decoded apart, and it is not accepted as is.
    return { data, mime: acceptedMime, converted };
  }

  const base = (): Sharp =>
    sharp(data, { failOn: 'error' }).autoOrient().toColourspace('srgb').withIccProfile('srgb');

  // Only the colour space was wrong: keep the format the user chose.
  if (acceptedMime && data.length <= maxBytes) {
    const out = await encodeAs(base(), format).toBuffer();
    if (out.length <= maxBytes) return { data: out, mime: acceptedMime, converted };
  }

  if (acceptedMime && acceptedMime !== 'image/jpeg') {
    converted.push(`${format.toUpperCase()} re-encoded as JPEG to fit ${formatMB(maxBytes)}`);
  }
  if (meta.hasAlpha) converted.push('Transparency flattened onto white');
  const jpeg = (pipeline: Sharp, quality: number): Promise<Buffer> =>
    pipeline.flatten({ background: '#ffffff' }).jpeg({ quality, mozjpeg: true }).toBuffer();

  for (const quality of QUALITY_STEPS) {
    const out = await jpeg(base(), quality);
    if (out.length <= maxBytes) {
      if (original.length > maxBytes || quality !== QUALITY_STEPS[0]) {
        converted.push(
          `Re-encoded at JPEG quality ${quality} (${formatMB(original.length)} → ${formatMB(out.length)})`,
        );
      }
      return { data: out, mime: 'image/jpeg', converted };
    }
  }
  // Quality alone was not enough: shrink in steps, keeping quality at the last step.
  const width = meta.autoOrient.width;
  const height = meta.autoOrient.height;
  const quality = QUALITY_STEPS.at(-1) ?? 70;
  for (let scale = 0.85; Math.max(width, height) * scale >= MIN_LONG_SIDE; scale *= 0.85) {
    const w = Math.round(width * scale);
    const h = Math.round(height * scale);
    const out = await jpeg(base().resize(w, h, { fit: 'fill' }), quality);
    if (out.length <= maxBytes) {
      converted.push(
        `Resized ${width}×${height} → ${w}×${h} at JPEG quality ${quality} to fit ${formatMB(maxBytes)}`,
      );
      return { data: out, mime: 'image/jpeg', converted };
    }
  }
  throw new UnsupportedImageError(`The photo cannot be brought under ${formatMB(maxBytes)}`);
}

async function decodeHeic(data: Buffer): Promise<Buffer> {
  try {
    return await heicToPng(data);
  } catch (error) {
    throw new UnsupportedImageError(`Cannot read the HEIC image: ${(error as Error).message}`);
  }
}

/** Why the colours need converting, or null when the image already is sRGB. */
function colourNote(meta: Metadata): string | null {
  if (meta.space !== 'srgb') return `Colour space ${meta.space} converted to sRGB`;
  if (meta.icc && !isSrgbProfile(meta.icc)) {
    return `Colour profile "${iccDescription(meta.icc) ?? 'unnamed'}" converted to sRGB`;
  }
  return null;
}

function encodeAs(pipeline: Sharp, format: SourceFormat): Sharp {
  switch (format) {
    case 'png':
      return pipeline.png();
    case 'webp':
      return pipeline.webp({ quality: 90 });
    default:
      return pipeline.jpeg({ quality: 90, mozjpeg: true });
  }
}

/** A size in the spec's unit (decimal MB, as its 8 MB limit). */
const formatMB = (bytes: number): string => `${(bytes / 1_000_000).toFixed(1)} MB`;
