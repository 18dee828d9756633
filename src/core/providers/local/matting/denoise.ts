/**
 * Sensor noise averaged away without averaging across edges: each pixel is the mean of the pixels
 * in its box that lie within a few noise sigmas of it (Lee's sigma filter). On open backdrop that
 * is nearly the whole box, so the noise falls as a box mean's does; beside the subject the box
 * holds subject pixels too, and a plain mean carried their colour `r` pixels out onto the
 * backdrop: gaps narrower than the box (between a strap and the body) never matched the backdrop
 * again, and the flood stopped short of the outline (02015_00 under noise sigma 6: halo 6 -> 46).
 */

/** Sigmas of the pixel's own noise within which a neighbour counts as the same surface. */
const SAME_SURFACE = 2.5;

/** Share of the box within the noise of the pixel from which no edge crosses it: the box mean. */
const EDGE_FREE = 0.75;

/**
 * `rgb` (3 channels) averaged over the box of radius `r`, each pixel over the neighbours within
 * SAME_SURFACE sigmas (every channel) of its 3x3 mean: the 3x3 mean, not the pixel, is the
 * reference, so the selection does not lean toward the pixel's own noise.
 */
export function sigmaMean(
  rgb: Uint8Array,
  w: number,
  h: number,
  r: number,
  sigma: number,
): Uint8Array {
  const guide = boxMean3(rgb, w, h);
  const limit = SAME_SURFACE * sigma * Math.sqrt(1 + 1 / 9);
  const out = new Uint8Array(rgb.length);
  for (let y = 0; y < h; y++) {
    const ya = Math.max(0, y - r);
    const yb = Math.min(h - 1, y + r);
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const g0 = guide[i * 3]!;
      const g1 = guide[i * 3 + 1]!;
      const g2 = guide[i * 3 + 2]!;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let count = 0;
      const xa = Math.max(0, x - r);
      const xb = Math.min(w - 1, x + r);
      for (let yy = ya; yy <= yb; yy++) {
        for (let j = (yy * w + xa) * 3, end = (yy * w + xb) * 3; j <= end; j += 3) {
          const v0 = rgb[j]!;
          const v1 = rgb[j + 1]!;
          const v2 = rgb[j + 2]!;
          if (Math.abs(v0 - g0) > limit || Math.abs(v1 - g1) > limit || Math.abs(v2 - g2) > limit)
            continue;
          s0 += v0;
          s1 += v1;
          s2 += v2;
          count++;
        }
      }
      const area = (yb - ya + 1) * (xb - xa + 1);
      if (count >= EDGE_FREE * area) {
        let b0 = 0;
        let b1 = 0;
        let b2 = 0;
        for (let yy = ya; yy <= yb; yy++) {
          for (let j = (yy * w + xa) * 3, end = (yy * w + xb) * 3; j <= end; j += 3) {
            b0 += rgb[j]!;
            b1 += rgb[j + 1]!;
            b2 += rgb[j + 2]!;
          }
        }
        out[i * 3] = Math.round(b0 / area);
        out[i * 3 + 1] = Math.round(b1 / area);
        out[i * 3 + 2] = Math.round(b2 / area);
      } else if (count === 0) {
        // A pixel on a sharp edge may match none of its box: its 3x3 mean stands.
        out[i * 3] = Math.round(g0);
        out[i * 3 + 1] = Math.round(g1);
        out[i * 3 + 2] = Math.round(g2);
      } else {
        out[i * 3] = Math.round(s0 / count);
        out[i * 3 + 1] = Math.round(s1 / count);
        out[i * 3 + 2] = Math.round(s2 / count);
      }
    }
  }
  return out;
}

/** The 3x3 mean of each channel (the box cut by the frame), unrounded. */
function boxMean3(rgb: Uint8Array, w: number, h: number): Float32Array {
  const out = new Float32Array(rgb.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let count = 0;
      for (let yy = Math.max(0, y - 1); yy <= Math.min(h - 1, y + 1); yy++) {
        for (let xx = Math.max(0, x - 1); xx <= Math.min(w - 1, x + 1); xx++) {
          const j = (yy * w + xx) * 3;
          s0 += rgb[j]!;
          s1 += rgb[j + 1]!;
          s2 += rgb[j + 2]!;
          count++;
        }
      }
      const i = (y * w + x) * 3;
      out[i] = s0 / count;
      out[i + 1] = s1 / count;
      out[i + 2] = s2 / count;
    }
  }
  return out;
}
