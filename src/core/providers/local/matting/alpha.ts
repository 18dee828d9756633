/**
 * The soft edge: along the outline each pixel is unmixed between the backdrop surface and the
 * subject's own colour nearby (the mean of clearly-inside pixels around it), so the edge sits where
 * a pixel is half subject, not where it first differs from the backdrop. Where the subject's
 * colour is too close to the backdrop to unmix (white on white), the segmentation's edge stands.
 */
import { boxSum, distanceToUnset } from './morphology';
import type { Segmentation } from './segment';

/** Below this contrast (levels) the unmixing ratio is mostly noise. */
const MIN_CONTRAST = 14;

export function edgeAlpha(rgb: Uint8Array, w: number, h: number, seg: Segmentation): Uint8Array {
  const n = w * h;
  const { fg, surface } = seg;
  const inside = distanceToUnset(fg, w, h);
  const interior = new Float32Array(n);
  for (let i = 0; i < n; i++) interior[i] = inside[i]! >= 3 ? 1 : 0;
  const colourSums = [0, 1, 2].map((c) => {
    const v = new Float32Array(n);
    for (let i = 0; i < n; i++) v[i] = interior[i] ? rgb[i * 3 + c]! : 0;
    return v;
  });
  const near = { count: boxSum(interior, w, h, 4), sums: colourSums.map((v) => boxSum(v, w, h, 4)) };
  const far = { count: boxSum(interior, w, h, 9), sums: colourSums.map((v) => boxSum(v, w, h, 9)) };
  const alpha = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (!fg[i]) continue;
    if (inside[i]! >= 3) {
      alpha[i] = 255;
      continue;
    }
    const src = near.count[i]! > 0 ? near : far;
    const count = src.count[i]!;
    if (!count) {
      alpha[i] = 255;
      continue;
    }
    let dot = 0;
    let norm = 0;
    for (let c = 0; c < 3; c++) {
      const b = surface[i * 3 + c]!;
      const f = src.sums[c]![i]! / count - b;
      dot += (rgb[i * 3 + c]! - b) * f;
      norm += f * f;
    }
    if (Math.sqrt(norm) < MIN_CONTRAST) {
      alpha[i] = 255;
      continue;
    }
    let a = dot / norm;
    // Clean the tails: JPEG ringing on the backdrop side, texture on the subject side.
    if (a < 0.15) a = 0;
    else if (a > 0.9) a = 1;
    alpha[i] = Math.round(255 * Math.min(1, a));
  }
  return alpha;
}
