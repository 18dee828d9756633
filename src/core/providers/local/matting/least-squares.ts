/** Linear least squares for the backdrop surfaces (smooth-backdrop, backdrop's trend). */

/** Gaussian elimination with partial pivoting (a is overwritten), or null when singular. */
export function solve(a: Float64Array, b: Float64Array): Float64Array | null {
  const n = b.length;
  const x = Float64Array.from(b);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++)
      if (Math.abs(a[r * n + col]!) > Math.abs(a[pivot * n + col]!)) pivot = r;
    if (Math.abs(a[pivot * n + col]!) < 1e-9) return null;
    if (pivot !== col) {
      for (let k = 0; k < n; k++) {
        const tmp = a[col * n + k]!;
        a[col * n + k] = a[pivot * n + k]!;
        a[pivot * n + k] = tmp;
      }
      [x[col], x[pivot]] = [x[pivot]!, x[col]!];
    }
    for (let r = col + 1; r < n; r++) {
      const f = a[r * n + col]! / a[col * n + col]!;
      if (!f) continue;
      for (let k = col; k < n; k++) a[r * n + k]! -= f * a[col * n + k]!;
      x[r]! -= f * x[col]!;
    }
  }
  for (let r = n - 1; r >= 0; r--) {
    let s = x[r]!;
    for (let k = r + 1; k < n; k++) s -= a[r * n + k]! * x[k]!;
    x[r] = s / a[r * n + r]!;
  }
  return x;
}
