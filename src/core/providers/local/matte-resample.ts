/**
 * Scaling a working-size matte up to the photo. Pixel centres are aligned (x_src = (x + 0.5) *
 * w / W - 0.5), the convention of the downscale that made the working image, so the outline stays
 * where it was found; libvips' linear upscale put it half an output pixel towards bottom-right.
 * Interpolation spreads a one-pixel edge (one partial pixel) over two working pixels, i.e. 2 x
 * scale output pixels; steepening the ramp around half alpha by that much brings it back to about
 * one output pixel without moving the 0.5 contour, so what counts as subject is unchanged.
 */

/** Source index and weight of the next one, per output column or row (centre-aligned). */
function taps(outSize: number, inSize: number): { index: Int32Array; weight: Float32Array } {
  const index = new Int32Array(outSize);
  const weight = new Float32Array(outSize);
  const ratio = inSize / outSize;
  for (let i = 0; i < outSize; i++) {
    const s = Math.min(inSize - 1, Math.max(0, (i + 0.5) * ratio - 0.5));
    const i0 = Math.min(inSize - 2, Math.floor(s));
    index[i] = Math.max(0, i0);
    weight[i] = inSize > 1 ? s - index[i]! : 0;
  }
  return { index, weight };
}

/**
 * `alpha` (w x h, 8-bit) scaled to `width` x `height` by centre-aligned bilinear interpolation,
 * its ramp steepened around 127.5 by twice the upscale factor (not when scaling down).
 */
export function upsampleMatte(
  alpha: Uint8Array,
  w: number,
  h: number,
  width: number,
  height: number,
): Buffer {
  const xs = taps(width, w);
  const ys = taps(height, h);
  const scale = Math.min(width / w, height / h);
  const gain = scale > 1 ? 2 * scale : 1;
  const step = (x: number): number => (x + 1 < w ? 1 : 0);
  const out = Buffer.alloc(width * height);
  const row0 = new Float32Array(width);
  const row1 = new Float32Array(width);
  const horizontal = (y: number, into: Float32Array): void => {
    const base = y * w;
    for (let x = 0; x < width; x++) {
      const i = xs.index[x]!;
      const a = alpha[base + i]!;
      into[x] = a + (alpha[base + i + step(i)]! - a) * xs.weight[x]!;
    }
  };
  let cached0 = -1;
  let cached1 = -1;
  for (let y = 0; y < height; y++) {
    const j = ys.index[y]!;
    const j1 = j + 1 < h ? j + 1 : j;
    if (cached0 !== j) {
      if (cached1 === j) row0.set(row1);
      else horizontal(j, row0);
      cached0 = j;
    }
    if (cached1 !== j1) {
      horizontal(j1, row1);
      cached1 = j1;
    }
    const wy = ys.weight[y]!;
    const o = y * width;
    for (let x = 0; x < width; x++) {
      const v = row0[x]! + (row1[x]! - row0[x]!) * wy;
      const steep = 127.5 + (v - 127.5) * gain;
      out[o + x] = steep <= 0 ? 0 : steep >= 255 ? 255 : Math.round(steep);
    }
  }
  return out;
}
