/** A pixel read as the backdrop in another light: the backdrop's colour scaled by the pixel's luminance gain. */

/**
 * The backdrop's colour at pixel `i` scaled by the pixel's luminance gain: the gain, and the
 * largest channel deviation from that shade (levels).
 */
export function shadeOf(
  rgb: Uint8Array,
  surface: Float32Array,
  i: number,
): { s: number; dev: number } {
  const o = i * 3;
  const by = 0.299 * surface[o]! + 0.587 * surface[o + 1]! + 0.114 * surface[o + 2]!;
  const iy = 0.299 * rgb[o]! + 0.587 * rgb[o + 1]! + 0.114 * rgb[o + 2]!;
  const s = (iy + 1) / (by + 1);
  let dev = 0;
  for (let c = 0; c < 3; c++) dev = Math.max(dev, Math.abs(rgb[o + c]! - s * surface[o + c]!));
  return { s, dev };
}
