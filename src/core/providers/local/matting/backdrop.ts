/**
 * The backdrop as a smooth colour surface: medians of known-background pixels on a coarse grid,
 * cells without background filled by diffusion from their neighbours (a harmonic fill, so a
 * gradient or vignette under the subject continues the one around it), read back bilinearly at
 * any resolution. Handles flat studio white, sweeps and vignettes alike.
 *
 * A harmonic fill never rises above the known cells around it, while a lens vignette keeps
 * brightening toward the centre, under the subject: there the fill lagged the backdrop beside the
 * outline by more than the flood's tolerance and the shadow test read the backdrop's shadow as
 * brighter than it (vignette 0.61: 051946_1 halo 122, 050191_1 95). So unknown cells are lifted
 * toward a quadratic trend of the known ones, bounded near the known cells (see lift).
 */
import { solve } from './least-squares';

export type Backdrop = {
  /** Grid values [gy][gx][c] flattened, in 0..255. */
  grid: Float32Array;
  gw: number;
  gh: number;
  /** The grid's cell size in working-resolution pixels, and that resolution. */
  cell: number;
  width: number;
  height: number;
  /** Levels the known cells' trend (green) rises under the unknown ones above their brightest. */
  rise: number;
};

/**
 * Median of each cell's pixels where `known` is set; cells with too few stay unknown and are
 * filled from their neighbours, starting from `start` (an earlier fit of the same grid) when given.
 */
export function fitBackdrop(
  rgb: Uint8Array,
  w: number,
  h: number,
  known: Uint8Array,
  cell: number,
  start?: Backdrop,
  /** Lift the unknown cells toward the known ones' trend (a strong vignette; see lift). */
  lifted = false,
): Backdrop {
  const gw = Math.ceil(w / cell);
  const gh = Math.ceil(h / cell);
  const cells = gw * gh;
  const grid = new Float32Array(cells * 3);
  const fixed = new Uint8Array(cells);
  const minCount = Math.max(4, (cell * cell) / 8);
  let fixedCount = 0;
  const sum = [0, 0, 0];
  // One cell at a time: its known values per channel, sorted (a cell holds at most cell^2).
  const values = [
    new Uint8Array(cell * cell),
    new Uint8Array(cell * cell),
    new Uint8Array(cell * cell),
  ];
  for (let gy = 0; gy < gh; gy++) {
    const y0 = gy * cell;
    const y1 = Math.min(h, y0 + cell);
    for (let gx = 0; gx < gw; gx++) {
      const x0 = gx * cell;
      const x1 = Math.min(w, x0 + cell);
      let count = 0;
      for (let y = y0; y < y1; y++) {
        for (let i = y * w + x0, end = y * w + x1; i < end; i++) {
          if (!known[i]) continue;
          values[0]![count] = rgb[i * 3]!;
          values[1]![count] = rgb[i * 3 + 1]!;
          values[2]![count] = rgb[i * 3 + 2]!;
          count++;
        }
      }
      if (count < minCount) continue;
      const g = gy * gw + gx;
      fixed[g] = 1;
      fixedCount++;
      for (let c = 0; c < 3; c++) {
        // The lower median: the first value whose cumulative count reaches half.
        const v = values[c]!.subarray(0, count).sort()[Math.ceil(count / 2) - 1]!;
        grid[g * 3 + c] = v;
        sum[c]! += v;
      }
    }
  }
  const warm = start && start.gw === gw && start.gh === gh ? start.grid : null;
  for (let g = 0; g < cells; g++)
    if (!fixed[g])
      for (let c = 0; c < 3; c++)
        grid[g * 3 + c] = warm ? warm[g * 3 + c]! : fixedCount ? sum[c]! / fixedCount : 255;
  let rise = 0;
  if (fixedCount && fixedCount < cells) {
    const trended = trendGrid(grid, fixed, gw, gh);
    harmonicFill(grid, fixed, gw, gh);
    if (trended) {
      let top = 0;
      for (let g = 0; g < cells; g++) if (fixed[g]) top = Math.max(top, grid[g * 3 + 1]!);
      for (let g = 0; g < cells; g++)
        if (!fixed[g]) rise = Math.max(rise, trended[g * 3 + 1]! - top);
    }
    if (trended && lifted) lift(grid, trended, fixed, gw, gh);
  }
  return { grid, gw, gh, cell, width: w, height: h, rise };
}

const LINEAR = Float64Array.from({ length: 256 }, (_, i) => {
  const v = i / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
});
const toLinear = (level: number) => {
  const lo = Math.max(0, Math.min(254, Math.floor(level)));
  return LINEAR[lo]! + (LINEAR[lo + 1]! - LINEAR[lo]!) * (level - lo);
};
const toLevels = (v: number) => {
  const c = Math.max(0, Math.min(1, v));
  return 255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055);
};

/** Harmonic fill of the unknown cells (Gauss-Seidel; the grid is small). */
function harmonicFill(grid: Float32Array, fixed: Uint8Array, gw: number, gh: number): void {
  for (let iter = 0; iter < 4 * (gw + gh); iter++) {
    let change = 0;
    for (let gy = 0; gy < gh; gy++) {
      for (let gx = 0; gx < gw; gx++) {
        const g = gy * gw + gx;
        if (fixed[g]) continue;
        for (let c = 0; c < 3; c++) {
          let s = 0;
          let k = 0;
          if (gx > 0) ((s += grid[(g - 1) * 3 + c]!), k++);
          if (gx < gw - 1) ((s += grid[(g + 1) * 3 + c]!), k++);
          if (gy > 0) ((s += grid[(g - gw) * 3 + c]!), k++);
          if (gy < gh - 1) ((s += grid[(g + gw) * 3 + c]!), k++);
          const v = s / k;
          change = Math.max(change, Math.abs(v - grid[g * 3 + c]!));
          grid[g * 3 + c] = v;
        }
      }
    }
    if (change < 0.05) break;
  }
}

/** The known cells' trend plus their residuals filled harmonically, at every cell (or null). */
function trendGrid(
  grid: Float32Array,
  fixed: Uint8Array,
  gw: number,
  gh: number,
): Float32Array | null {
  const base = trendFill(grid, fixed, gw, gh);
  if (!base) return null;
  const residual = new Float32Array(grid.length);
  for (let k = 0; k < grid.length; k++) if (fixed[(k / 3) | 0]) residual[k] = grid[k]! - base[k]!;
  harmonicFill(residual, fixed, gw, gh);
  for (let k = 0; k < grid.length; k++) residual[k] = Math.min(255, residual[k]! + base[k]!);
  return residual;
}

/** Cells around an unknown one whose brightest known value bounds its lift. */
const LIFT_REACH = 3;
/**
 * Levels an unknown cell may be lifted over that brightest known cell: enough to follow a lens
 * vignette past the frame's brightest (051946_1 at k 0.61: the flood stalled 40 px short of the
 * jeans, halo 122), not so far that a backdrop lit brighter in the middle meets the shaded side
 * of a white tee (048554_1: the trend unbounded took it, 0.981 -> 0.940).
 */
const LIFT_LEVELS = 6;

/**
 * Unknown cells raised toward the trend where it runs above the harmonic fill (which never rises
 * above its boundary), but to no more than LIFT_LEVELS over the brightest known cell near them.
 */
function lift(
  grid: Float32Array,
  trended: Float32Array,
  fixed: Uint8Array,
  gw: number,
  gh: number,
): void {
  for (let gy = 0; gy < gh; gy++)
    for (let gx = 0; gx < gw; gx++) {
      const g = gy * gw + gx;
      if (fixed[g]) continue;
      for (let c = 0; c < 3; c++) {
        let near = -1;
        for (let y = Math.max(0, gy - LIFT_REACH); y <= Math.min(gh - 1, gy + LIFT_REACH); y++)
          for (let x = Math.max(0, gx - LIFT_REACH); x <= Math.min(gw - 1, gx + LIFT_REACH); x++)
            if (fixed[y * gw + x]) near = Math.max(near, grid[(y * gw + x) * 3 + c]!);
        if (near < 0) continue;
        const k = g * 3 + c;
        grid[k] = Math.max(grid[k]!, Math.min(trended[k]!, near + LIFT_LEVELS));
      }
    }
}

/**
 * A quadratic in linear light per channel, least squares over the known cells, at every cell (or
 * null when too few are known). A lens vignette is a gain falling with the square of the distance
 * from the centre: under the subject the backdrop keeps rising past the brightest known cell,
 * where a harmonic fill never goes above its boundary.
 */
function trendFill(
  grid: Float32Array,
  fixed: Uint8Array,
  gw: number,
  gh: number,
): Float32Array | null {
  const T = 6;
  const termsAt = (gx: number, gy: number, out: Float64Array) => {
    const u = (2 * gx + 1) / gw - 1;
    const v = (2 * gy + 1) / gh - 1;
    out.set([1, u, v, u * u, v * v, u * v]);
  };
  const ata = new Float64Array(T * T);
  const atb = [0, 1, 2].map(() => new Float64Array(T));
  const t = new Float64Array(T);
  let count = 0;
  for (let g = 0; g < gw * gh; g++) {
    if (!fixed[g]) continue;
    count++;
    termsAt(g % gw, (g / gw) | 0, t);
    for (let a = 0; a < T; a++) {
      for (let b = 0; b < T; b++) ata[a * T + b]! += t[a]! * t[b]!;
      for (let c = 0; c < 3; c++) atb[c]![a]! += t[a]! * toLinear(grid[g * 3 + c]!);
    }
  }
  if (count < 4 * T) return null;
  const coeffs = atb.map((rhs) => solve(Float64Array.from(ata), rhs));
  if (coeffs.some((k) => !k)) return null;
  const out = new Float32Array(gw * gh * 3);
  for (let g = 0; g < gw * gh; g++) {
    termsAt(g % gw, (g / gw) | 0, t);
    for (let c = 0; c < 3; c++) {
      let s = 0;
      for (let a = 0; a < T; a++) s += coeffs[c]![a]! * t[a]!;
      out[g * 3 + c] = toLevels(s);
    }
  }
  return out;
}

/** The backdrop colour at every pixel of a `width` x `height` image (any scale of the fit). */
export function renderBackdrop(b: Backdrop, width: number, height: number): Float32Array {
  const out = new Float32Array(width * height * 3);
  const sx = b.width / width;
  const sy = b.height / height;
  // Cell centres sit at (g + 0.5) * cell; column weights are the same on every row.
  const x0s = new Int32Array(width);
  const x1s = new Int32Array(width);
  const txs = new Float32Array(width);
  for (let x = 0; x < width; x++) {
    const fx = Math.min(b.gw - 1, Math.max(0, ((x + 0.5) * sx) / b.cell - 0.5));
    x0s[x] = Math.floor(fx);
    x1s[x] = Math.min(b.gw - 1, x0s[x]! + 1);
    txs[x] = fx - x0s[x]!;
  }
  // Each output row interpolates between two grid rows: blend those once, then only along x.
  const row = new Float32Array(b.gw * 3);
  for (let y = 0; y < height; y++) {
    const fy = Math.min(b.gh - 1, Math.max(0, ((y + 0.5) * sy) / b.cell - 0.5));
    const top = Math.floor(fy) * b.gw * 3;
    const bottom = Math.min(b.gh - 1, Math.floor(fy) + 1) * b.gw * 3;
    const ty = fy - Math.floor(fy);
    for (let k = 0; k < b.gw * 3; k++)
      row[k] = b.grid[top + k]! + (b.grid[bottom + k]! - b.grid[top + k]!) * ty;
    let o = y * width * 3;
    for (let x = 0; x < width; x++, o += 3) {
      const a0 = x0s[x]! * 3;
      const a1 = x1s[x]! * 3;
      const tx = txs[x]!;
      out[o] = row[a0]! + (row[a1]! - row[a0]!) * tx;
      out[o + 1] = row[a0 + 1]! + (row[a1 + 1]! - row[a0 + 1]!) * tx;
      out[o + 2] = row[a0 + 2]! + (row[a1 + 2]! - row[a0 + 2]!) * tx;
    }
  }
  return out;
}
