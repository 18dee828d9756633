/**
 * The backdrop as a smooth colour surface: medians of known-background pixels on a coarse grid,
 * cells without background filled by diffusion from their neighbours (a harmonic fill, so a
 * gradient or vignette under the subject continues the one around it), read back bilinearly at
 * any resolution. Handles flat studio white, sweeps and vignettes alike.
 */

export type Backdrop = {
  /** Grid values [gy][gx][c] flattened, in 0..255. */
  grid: Float32Array;
  gw: number;
  gh: number;
  /** The grid's cell size in working-resolution pixels, and that resolution. */
  cell: number;
  width: number;
  height: number;
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
  // Harmonic fill of the unknown cells (Gauss-Seidel; the grid is small).
  if (fixedCount && fixedCount < cells) {
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
  return { grid, gw, gh, cell, width: w, height: h };
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
