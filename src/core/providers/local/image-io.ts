/** Decoding helpers shared by the local tools: one decode, clear errors for bad inputs. */
import type { Metadata, OverlayOptions, Sharp } from 'sharp';
import { sharp } from '../../../infra/sharp';
import { ProviderError } from '../types';

export type RawImage = { data: Buffer; width: number; height: number; channels: number };

/** Rejects undecodable or truncated input with a readable ProviderError. */
export async function decodeMeta(input: Buffer | string): Promise<Metadata> {
  try {
    const meta = await sharp(input, { failOn: 'error' }).metadata();
    if (!meta.width || !meta.height) throw new Error('no dimensions');
    return meta;
  } catch (err) {
    throw new ProviderError(
      `the input image cannot be decoded (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

/** An upright sharp pipeline of the input (EXIF orientation applied), failing on corrupt data. */
export function open(input: Buffer | string): Sharp {
  return sharp(input, { failOn: 'error' }).rotate();
}

/** Raw sRGB pixels of the upright input at full size, alpha dropped (3 channels). */
export async function rgbPixels(input: Buffer | string): Promise<RawImage> {
  const { data, info } = await open(input)
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Raw RGB(A) pixels of the input, scaled so the long side is at most `longSide`. */
export async function rawPixels(
  input: Buffer | string,
  longSide: number,
  channels: 3 | 4 = 3,
): Promise<RawImage> {
  try {
    let img = open(input).resize(longSide, longSide, { fit: 'inside', withoutEnlargement: true });
    img =
      channels === 3
        ? img.removeAlpha().toColourspace('srgb')
        : img.ensureAlpha().toColourspace('srgb');
    const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height, channels: info.channels };
  } catch (err) {
    throw new ProviderError(
      `the input image cannot be decoded (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

export function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ProviderError('the generation was cancelled');
}

/** Parses `W:H` (or 'auto', which keeps `fallback`). */
export function ratioOf(value: string | undefined, fallback: number): number {
  if (!value || value === 'auto') return fallback;
  const [w, h] = value.split(':').map(Number);
  return w && h ? w / h : fallback;
}

/** Canvas size for a ratio with the given long side (even numbers: video encoders need them). */
export function canvasFor(ratio: number, longSide: number): { width: number; height: number } {
  const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);
  return ratio >= 1
    ? { width: even(longSide), height: even(longSide / ratio) }
    : { width: even(longSide * ratio), height: even(longSide) };
}
