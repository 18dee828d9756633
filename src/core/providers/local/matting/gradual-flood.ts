/**
 * A flood that follows gradual shading: each pixel joins from the neighbour it is reached from
 * when their 3x3 mean colours differ by at most a step, so it runs across a shadow's penumbra or
 * a floor's gradient and stops at a sharp outline (a shoe, a leg). Morphology's flood asks only
 * about the pixel joining, so it cannot tell a gradient from an edge.
 */
import { boxSum } from './morphology';

/** 3x3 means per channel, so grain and JPEG noise do not read as edges. */
export function channelMeans(rgb: Uint8Array, w: number, h: number): Float32Array[] {
  const n = w * h;
  const count = boxSum(new Float32Array(n).fill(1), w, h, 1);
  return [0, 1, 2].map((c) => {
    const v = new Float32Array(n);
    for (let i = 0; i < n; i++) v[i] = rgb[i * 3 + c]!;
    const s = boxSum(v, w, h, 1);
    for (let i = 0; i < n; i++) s[i] = s[i]! / count[i]!;
    return s;
  });
}

/** The largest channel difference between the means of two pixels. */
export function meanStep(means: Float32Array[], i: number, j: number): number {
  const [r, g, b] = means as [Float32Array, Float32Array, Float32Array];
  return Math.max(Math.abs(r[i]! - r[j]!), Math.abs(g[i]! - g[j]!), Math.abs(b[i]! - b[j]!));
}

/** Sets `into[j] = 1` for pixels reached from `seeds` through `allowed` pixels by steps <= `limit`. */
export function gradualFlood(
  into: Uint8Array,
  seeds: Iterable<number>,
  means: Float32Array[],
  w: number,
  limit: number,
  allowed: (j: number) => boolean,
): void {
  const n = into.length;
  const stack: number[] = [];
  for (const s of seeds) if (!into[s] && allowed(s)) ((into[s] = 1), stack.push(s));
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % w;
    for (const j of [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i - w, i + w]) {
      if (j < 0 || j >= n || into[j] || !allowed(j) || meanStep(means, i, j) > limit) continue;
      into[j] = 1;
      stack.push(j);
    }
  }
}
