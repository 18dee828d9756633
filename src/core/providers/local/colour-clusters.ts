/**
 * A few representative Lab colours of a set of pixels (k-means), and the distance of a colour to
 * the nearest of them: how the offline tools tell one garment's colours from a wall or another
 * garment without a segmentation model.
 */

/** Lightness counts for less than hue: folds and shading change L across one fabric. */
const L_WEIGHT = 0.6;

export function labDistance(lab: Float32Array, i: number, c: readonly number[]): number {
  const dl = (lab[i * 3]! - c[0]!) * L_WEIGHT;
  const da = lab[i * 3 + 1]! - c[1]!;
  const db = lab[i * 3 + 2]! - c[2]!;
  return Math.sqrt(dl * dl + da * da + db * db);
}

export function nearest(lab: Float32Array, i: number, centres: readonly number[][]): number {
  let best = Infinity;
  for (const c of centres) best = Math.min(best, labDistance(lab, i, c));
  return best;
}

/**
 * Up to `k` cluster centres of the pixels `indices` of a packed Lab image, keeping only those that
 * hold at least `minShare` of the pixels (edges and stray pixels make small clusters). Seeded by
 * farthest-point picking, so the result does not depend on chance.
 */
export function clusterColours(
  lab: Float32Array,
  indices: readonly number[],
  k: number,
  minShare = 0.08,
): number[][] {
  if (indices.length === 0) return [];
  const centres: number[][] = [];
  const first = indices[indices.length >> 1]!;
  centres.push([lab[first * 3]!, lab[first * 3 + 1]!, lab[first * 3 + 2]!]);
  while (centres.length < k) {
    let far = -1;
    let farD = 0;
    for (const i of indices) {
      const d = nearest(lab, i, centres);
      if (d > farD) {
        farD = d;
        far = i;
      }
    }
    if (far < 0 || farD < 4) break;
    centres.push([lab[far * 3]!, lab[far * 3 + 1]!, lab[far * 3 + 2]!]);
  }
  let counts = new Array<number>(centres.length).fill(0);
  for (let iter = 0; iter < 8; iter++) {
    const sums = centres.map(() => [0, 0, 0]);
    counts = counts.map(() => 0);
    for (const i of indices) {
      let best = 0;
      let bestD = Infinity;
      for (let c = 0; c < centres.length; c++) {
        const d = labDistance(lab, i, centres[c]!);
        if (d < bestD) {
          bestD = d;
          best = c;
        }
      }
      counts[best]!++;
      for (let ch = 0; ch < 3; ch++) sums[best]![ch]! += lab[i * 3 + ch]!;
    }
    for (let c = 0; c < centres.length; c++)
      if (counts[c]) centres[c] = sums[c]!.map((s) => s / counts[c]!);
  }
  return centres.filter((_, c) => counts[c]! >= indices.length * minShare);
}
