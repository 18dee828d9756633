/**
 * The convex hull of a mask, filled: the outline a garment keeps when its own outline is lost
 * (white fabric clipped with a white backdrop, see keepClippedFabric in segment.ts).
 */

type Point = [number, number];

const cross = (o: Point, a: Point, b: Point) =>
  (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);

/** Andrew's monotone chain over each row's two ends (the hull's only candidates). */
function hullOf(points: Point[]): Point[] {
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const chain = (order: Point[]) => {
    const out: Point[] = [];
    for (const p of order) {
      while (out.length >= 2 && cross(out[out.length - 2]!, out[out.length - 1]!, p) <= 0)
        out.pop();
      out.push(p);
    }
    return out.slice(0, -1);
  };
  return [...chain(points), ...chain([...points].reverse())];
}

/** The convex hull of the set pixels, filled row by row. */
export function convexHull(mask: Uint8Array, w: number, h: number): Uint8Array {
  const points: Point[] = [];
  for (let y = 0; y < h; y++) {
    let first = -1;
    let last = -1;
    for (let x = 0; x < w; x++)
      if (mask[y * w + x]) {
        if (first < 0) first = x;
        last = x;
      }
    if (first >= 0) points.push([first, y], [last, y]);
  }
  if (points.length < 3) return Uint8Array.from(mask);
  const hull = hullOf(points);
  // Each row's span: where the row crosses the hull's edges.
  const left = new Float64Array(h).fill(Infinity);
  const right = new Float64Array(h).fill(-Infinity);
  for (let k = 0; k < hull.length; k++) {
    const [x0, y0] = hull[k]!;
    const [x1, y1] = hull[(k + 1) % hull.length]!;
    for (let y = Math.min(y0, y1); y <= Math.max(y0, y1); y++) {
      const a = y0 === y1 ? Math.min(x0, x1) : x0 + ((y - y0) * (x1 - x0)) / (y1 - y0);
      const b = y0 === y1 ? Math.max(x0, x1) : a;
      left[y] = Math.min(left[y]!, a);
      right[y] = Math.max(right[y]!, b);
    }
  }
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const from = Math.max(0, Math.ceil(left[y]! - 1e-9));
    const to = Math.min(w - 1, Math.floor(right[y]! + 1e-9));
    for (let x = from; x <= to; x++) out[y * w + x] = 1;
  }
  return out;
}
