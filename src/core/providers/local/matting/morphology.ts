/** Binary-mask helpers on row-major w x h grids (1 = set): flood, components, distances, box sums. */

/** 4-neighbours of pixel i, or -1 past the edge. */
export function neighbours4(i: number, w: number, n: number, out: Int32Array): Int32Array {
  const x = i % w;
  out[0] = x > 0 ? i - 1 : -1;
  out[1] = x < w - 1 ? i + 1 : -1;
  out[2] = i >= w ? i - w : -1;
  out[3] = i + w < n ? i + w : -1;
  return out;
}

/**
 * Grows seeded regions outward by 4-neighbour steps, up to `steps`, never into `blocked` pixels:
 * each pixel reached goes to the region that reaches it first (`owner`: a region per seed pixel,
 * -1 elsewhere; written in place, seeds taken in index order) and is shown to `visit` with that
 * region and its step (1: touching the region).
 */
export function growRegions(
  owner: Int32Array,
  w: number,
  steps: number,
  blocked: (j: number) => boolean,
  visit: (j: number, region: number, step: number) => void,
): void {
  const n = owner.length;
  let frontier: number[] = [];
  for (let i = 0; i < n; i++) if (owner[i]! >= 0) frontier.push(i);
  const nb = new Int32Array(4);
  for (let step = 1; step <= steps && frontier.length; step++) {
    const next: number[] = [];
    for (const i of frontier) {
      neighbours4(i, w, n, nb);
      for (let k = 0; k < 4; k++) {
        const j = nb[k]!;
        if (j < 0 || owner[j] !== -1 || blocked(j)) continue;
        const l = owner[i]!;
        owner[j] = l;
        next.push(j);
        visit(j, l, step);
      }
    }
    frontier = next;
  }
}

/** Sets `into[j] = 1` for every pixel reachable from `seeds` through pixels where `allowed(j)`. */
export function flood(
  into: Uint8Array,
  seeds: Iterable<number>,
  w: number,
  allowed: (j: number) => boolean,
): void {
  const n = into.length;
  const stack = new Int32Array(n);
  let top = 0;
  for (const s of seeds) {
    if (!into[s] && allowed(s)) {
      into[s] = 1;
      stack[top++] = s;
    }
  }
  const nb = new Int32Array(4);
  while (top) {
    const i = stack[--top]!;
    neighbours4(i, w, n, nb);
    for (let k = 0; k < 4; k++) {
      const j = nb[k]!;
      if (j >= 0 && !into[j] && allowed(j)) {
        into[j] = 1;
        stack[top++] = j;
      }
    }
  }
}

/** Pixels of `region` with a 4-neighbour in `background`: where a flood from it enters `region`. */
export function touchingBackground(
  region: (i: number) => boolean,
  background: Uint8Array,
  w: number,
): number[] {
  const n = background.length;
  const seeds: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!region(i)) continue;
    const x = i % w;
    if (
      (x > 0 && background[i - 1]) ||
      (x < w - 1 && background[i + 1]) ||
      (i >= w && background[i - w]) ||
      (i + w < n && background[i + w])
    )
      seeds.push(i);
  }
  return seeds;
}

/** Indices of the frame's pixels. */
export function borderPixels(w: number, h: number): number[] {
  const out: number[] = [];
  for (let x = 0; x < w; x++) out.push(x, (h - 1) * w + x);
  for (let y = 1; y < h - 1; y++) out.push(y * w, y * w + w - 1);
  return out;
}

/** Connected components (4-connected) of the set pixels: a label per pixel (-1 unset) and sizes. */
export function components(mask: Uint8Array, w: number): { label: Int32Array; sizes: number[] } {
  const n = mask.length;
  const label = new Int32Array(n).fill(-1);
  const sizes: number[] = [];
  const stack = new Int32Array(n);
  for (let start = 0; start < n; start++) {
    if (!mask[start] || label[start] !== -1) continue;
    const id = sizes.length;
    let size = 0;
    let top = 0;
    label[start] = id;
    stack[top++] = start;
    while (top) {
      const i = stack[--top]!;
      size++;
      const x = i % w;
      if (x > 0 && mask[i - 1] && label[i - 1] === -1)
        ((label[i - 1] = id), (stack[top++] = i - 1));
      if (x < w - 1 && mask[i + 1] && label[i + 1] === -1)
        ((label[i + 1] = id), (stack[top++] = i + 1));
      if (i >= w && mask[i - w] && label[i - w] === -1)
        ((label[i - w] = id), (stack[top++] = i - w));
      if (i + w < n && mask[i + w] && label[i + w] === -1)
        ((label[i + w] = id), (stack[top++] = i + w));
    }
    sizes.push(size);
  }
  return { label, sizes };
}

/** Chamfer (3-4) distance in pixels from every pixel to the nearest pixel where `mask` is 0. */
export function distanceToUnset(mask: Uint8Array, w: number, h: number): Float32Array {
  const big = 1e9;
  const d = new Float32Array(w * h);
  for (let i = 0; i < d.length; i++) d[i] = mask[i] ? big : 0;
  const a = 1;
  const b = Math.SQRT2;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!d[i]) continue;
      let v = d[i]!;
      if (x > 0) v = Math.min(v, d[i - 1]! + a);
      if (y > 0) {
        v = Math.min(v, d[i - w]! + a);
        if (x > 0) v = Math.min(v, d[i - w - 1]! + b);
        if (x < w - 1) v = Math.min(v, d[i - w + 1]! + b);
      }
      d[i] = v;
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      const i = y * w + x;
      if (!d[i]) continue;
      let v = d[i]!;
      if (x < w - 1) v = Math.min(v, d[i + 1]! + a);
      if (y < h - 1) {
        v = Math.min(v, d[i + w]! + a);
        if (x < w - 1) v = Math.min(v, d[i + w + 1]! + b);
        if (x > 0) v = Math.min(v, d[i + w - 1]! + b);
      }
      d[i] = v;
    }
  }
  return d;
}

/** Square dilation by `r` (separable max filter). */
export function dilate(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  if (r <= 0) return Uint8Array.from(mask);
  const tmp = new Uint8Array(mask.length);
  for (let y = 0; y < h; y++) {
    let last = -1e9; // last set x seen scanning right
    const row = y * w;
    for (let x = 0; x < w + r; x++) {
      if (x < w && mask[row + x]) last = x;
      const out = x - r;
      if (out >= 0 && out < w && x - last <= 2 * r) tmp[row + out] = 1;
    }
  }
  const out = new Uint8Array(mask.length);
  for (let x = 0; x < w; x++) {
    let last = -1e9;
    for (let y = 0; y < h + r; y++) {
      if (y < h && tmp[y * w + x]) last = y;
      const o = y - r;
      if (o >= 0 && o < h && y - last <= 2 * r) out[o * w + x] = 1;
    }
  }
  return out;
}

/** Square erosion by `r`; the frame counts as set, so masks touching it are not eaten from there. */
export function erode(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const inv = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) inv[i] = mask[i] ? 0 : 1;
  const grown = dilate(inv, w, h, r);
  for (let i = 0; i < grown.length; i++) grown[i] = grown[i] ? 0 : 1;
  return grown;
}

/** Sum of `values` over the (2r+1)^2 box around each pixel, clipped at the frame. */
export function boxSum(values: Float32Array, w: number, h: number, r: number): Float32Array {
  const tmp = new Float32Array(values.length);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let acc = 0;
    for (let x = 0; x <= Math.min(r, w - 1); x++) acc += values[row + x]!;
    for (let x = 0; x < w; x++) {
      tmp[row + x] = acc;
      if (x + r + 1 < w) acc += values[row + x + r + 1]!;
      if (x - r >= 0) acc -= values[row + x - r]!;
    }
  }
  // Vertical pass row by row (a running sum of rows), so memory is read in order.
  const out = new Float32Array(values.length);
  const acc = new Float64Array(w); // integer sums stay exact
  for (let y = 0; y <= Math.min(r, h - 1); y++)
    for (let x = 0; x < w; x++) acc[x]! += tmp[y * w + x]!;
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) out[row + x] = acc[x]!;
    if (y + r + 1 < h) {
      const add = (y + r + 1) * w;
      for (let x = 0; x < w; x++) acc[x]! += tmp[add + x]!;
    }
    if (y - r >= 0) {
      const sub = (y - r) * w;
      for (let x = 0; x < w; x++) acc[x]! -= tmp[sub + x]!;
    }
  }
  return out;
}

/**
 * `flood` that enters `busy` pixels at most `maxSteps` deep: first everything reachable through
 * allowed, not-busy pixels, then from all of that at once (breadth first) into busy ones.
 */
export function floodShallow(
  into: Uint8Array,
  seeds: Iterable<number>,
  w: number,
  allowed: (j: number) => boolean,
  busy: Uint8Array,
  maxSteps: number,
): void {
  flood(into, seeds, w, (j) => !busy[j] && allowed(j));
  const n = into.length;
  const queue = new Int32Array(n);
  const steps = new Uint8Array(n);
  let tail = 0;
  for (let i = 0; i < n; i++) if (into[i]) queue[tail++] = i;
  for (const s of seeds) {
    if (!into[s] && allowed(s)) {
      into[s] = 1;
      steps[s] = 1;
      queue[tail++] = s;
    }
  }
  const nb = new Int32Array(4);
  for (let head = 0; head < tail; head++) {
    const i = queue[head]!;
    if (steps[i]! >= maxSteps) continue;
    neighbours4(i, w, n, nb);
    for (let k = 0; k < 4; k++) {
      const j = nb[k]!;
      if (j >= 0 && !into[j] && allowed(j)) {
        into[j] = 1;
        steps[j] = busy[j] ? steps[i]! + 1 : 0;
        queue[tail++] = j;
      }
    }
  }
}
