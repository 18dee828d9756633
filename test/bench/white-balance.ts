/** Colour-temperature changes for the quality benches and the retouch tests. */

/** Linear sRGB of the CIE daylight white at `kelvin` (valid 4000-25000 K), Y = 1. */
function daylight(kelvin: number): [number, number, number] {
  const t = kelvin;
  const x = -4.607e9 / t ** 3 + 2.9678e6 / t ** 2 + 0.09911e3 / t + 0.244063;
  const y = -3 * x * x + 2.87 * x - 0.275;
  const X = x / y;
  const Z = (1 - x - y) / y;
  return [
    3.2406 * X - 1.5372 - 0.4986 * Z,
    -0.9689 * X + 1.8758 + 0.0415 * Z,
    0.0557 * X - 0.204 + 1.057 * Z,
  ];
}

/**
 * Linear-light gains of a white balance set `shift` K off: a neutral lit at 6500 K rendered as the
 * camera would render daylight at 6500 - shift balanced for 6500 (warmer for a positive shift).
 * Green kept at 1.
 */
export function whiteBalanceGains(shift: number): [number, number, number] {
  const ref = daylight(6504);
  const lit = daylight(6504 - shift);
  const g = lit.map((v, c) => v / ref[c]!);
  return [g[0]! / g[1]!, 1, g[2]! / g[1]!];
}
