/**
 * A photo too small for any publishable result is not sent: a thumbnail dropped by mistake was
 * uploaded and paid for without a word (review uirev A3: 96×128 px, 4 diamonds, flagged only by
 * the export's compliance afterwards). The spec names no minimum; this one only stops mistakes.
 */
import { sharp } from '../infra/sharp';

/** Pixels on the shorter side below which no tool but an upscale is worth its diamonds. */
export const MIN_SHORT_SIDE = 128;

/** Tools made to take small photos. */
const TAKES_SMALL_PHOTOS = new Set(['photo_enhance']);

/** Why this photo is not sent to `toolId` (null: a ready shoot), or null when its size is fine. */
export async function tooSmallReason(photo: Buffer, toolId: string | null): Promise<string | null> {
  if (toolId && TAKES_SMALL_PHOTOS.has(toolId)) return null;
  const { width, height, orientation } = await sharp(photo).metadata();
  if (!width || !height || Math.min(width, height) >= MIN_SHORT_SIDE) return null;
  // EXIF orientations 5-8 turn the picture a quarter: say its size as it is seen.
  const [seenWidth, seenHeight] = (orientation ?? 1) >= 5 ? [height, width] : [width, height];
  return `the photo is ${seenWidth}×${seenHeight} px, too small for ${toolId ?? 'a ready shoot'} (at least ${MIN_SHORT_SIDE} px on its shorter side): nothing was sent or spent. Use a larger photo, or upscale it first with photo_enhance`;
}
