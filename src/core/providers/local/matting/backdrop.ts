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

/** Median of each cell's pixels where `known` is set; cells with too few stay unknown. */
export function fitBackdrop(rgb: Uint8Array, w: number, h: number, known: Uint8Array, cell: number): Backdrop {
  const gw = Math.ceil(w / cell);
  const gh = Math.ceil(h / cell);
  const cells = gw * gh;
  const hist = new Uint32Array(cells * 3 * 256);
  const count = new Uint32Array(cells);
  for (let y = 0; y < h; y++) {
    const gy = Math.floor(y / cell);
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!known[i]) continue;
      const g = gy * gw + Math.floor(x / cell);
      count[g]!++;
      for (let c = 0; c < 3; c++) hist[(g * 3 + c) * 256 + rgb[i * 3 + c]!]!++;
    }
  }
  const grid = new Float32Array(cells * 3);
  const fixed = new Uint8Array(cells);
  const minCount = Math.max(4, (cell * cell) / 8);
  let fixedCount = 0;
  const sum = [0, 0, 0];
  for (let g = 0; g < cells; g++) {
    if (count[g]! < minCount) continue;
    fixed[g] = 1;
    fixedCount++;
    for (let c = 0; c < 3; c++) {
      const base = (g * 3 + c) * 256;
      let acc = 0;
      let v = 0;
      while (v < 255 && (acc += hist[base + v]!) * 2 < count[g]!) v++;
      grid[g * 3 + c] = v;
      sum[c]! += v;
    }
  }
  for (let g = 0; g < cells; g++) if (!fixed[g]) for (let c = 0; c < 3; c++) grid[g * 3 + c] = fixedCount ? sum[c]! / fixedCount : 255;
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
            if (gx > 0) (s += grid[(g - 1) * 3 + c]!), k++;
            if (gx < gw - 1) (s += grid[(g + 1) * 3 + c]!), k++;
            if (gy > 0) (s += grid[(g - gw) * 3 + c]!), k++;
            if (gy < gh - 1) (s += grid[(g + gw) * 3 + c]!), k++;
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
  const rowTop = new Float32Array(b.gw * 3);
  const rowBottom = new Float32Array(b.gw * 3);
  for (let y = 0; y < height; y++) {
    const fy = Math.min(b.gh - 1, Math.max(0, ((y + 0.5) * sy) / b.cell - 0.5));
    const y0 = Math.floor(fy);
    const y1 = Math.min(b.gh - 1, y0 + 1);
    const ty = fy - y0;
    for (let k = 0; k < b.gw * 3; k++) {
      rowTop[k] = b.grid[y0 * b.gw * 3 + k]!;
      rowBottom[k] = b.grid[y1 * b.gw * 3 + k]!;
    }
    for (let x = 0; x < width; x++) {
      const a0 = x0s[x]! * 3;
      const a1 = x1s[x]! * 3;
      const tx = txs[x]!;
      const o = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) {
        const top = rowTop[a0 + c]! + (rowTop[a1 + c]! - rowTop[a0 + c]!) * tx;
        const bottom = rowBottom[a0 + c]! + (rowBottom[a1 + c]! - rowBottom[a0 + c]!) * tx;
        out[o + c] = top + (bottom - top) * ty;
      }
    }
  }
  return out;
}
