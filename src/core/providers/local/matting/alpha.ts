/**
 * The soft edge: along the outline each pixel is unmixed between the backdrop surface and the
 * subject's own colour nearby (the mean of clearly-inside pixels around it), so the edge sits where
 * a pixel is half subject, not where it first differs from the backdrop. Where the subject's
 * colour is too close to the backdrop to unmix (white on white), the segmentation's edge stands.
 */
import { distanceToUnset } from './morphology';
import type { Segmentation } from './segment';

/** Below this contrast (levels) the unmixing ratio is mostly noise. */
const MIN_CONTRAST = 14;

export function edgeAlpha(rgb: Uint8Array, w: number, h: number, seg: Segmentation): Uint8Array {
  const n = w * h;
  const { fg, surface } = seg;
  const inside = distanceToUnset(fg, w, h);
  // The mean colour of clearly-inside pixels (>= 3 px in) in a box around an edge pixel: 9x9,
  // or 19x19 where the small box has none. Summed directly, since only the outline needs it.
  const sum = new Float64Array(3);
  const boxMean = (x0: number, y0: number, r: number): number => {
    let count = 0;
    sum[0] = sum[1] = sum[2] = 0;
    const ya = Math.max(0, y0 - r);
    const yb = Math.min(h - 1, y0 + r);
    const xa = Math.max(0, x0 - r);
    const xb = Math.min(w - 1, x0 + r);
    for (let y = ya; y <= yb; y++) {
      for (let j = y * w + xa, end = y * w + xb; j <= end; j++) {
        if (inside[j]! < 3) continue;
        count++;
        sum[0]! += rgb[j * 3]!;
        sum[1]! += rgb[j * 3 + 1]!;
        sum[2]! += rgb[j * 3 + 2]!;
      }
    }
    return count;
  };
  const alpha = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (!fg[i]) continue;
    if (inside[i]! >= 3) {
      alpha[i] = 255;
      continue;
    }
    const x = i % w;
    const y = (i - x) / w;
    let count = boxMean(x, y, 4);
    if (!count) count = boxMean(x, y, 9);
    if (!count) {
      alpha[i] = 255;
      continue;
    }
    let dot = 0;
    let norm = 0;
    for (let c = 0; c < 3; c++) {
      const b = surface[i * 3 + c]!;
      const f = sum[c]! / count - b;
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
