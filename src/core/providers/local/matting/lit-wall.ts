/**
 * The wall beside a figure that the backdrop's surface fit does not follow: cast shadows and
 * zones of other light (a gain on the backdrop's colour, smooth, with the open wall's fine
 * texture). `wallModel` says which pixels look like that wall; `addLitWall` floods them from the
 * background.
 */
import { boxSum, erode, flood, neighbours4, touchingBackground } from './morphology';

/** Gains of the backdrop a wall's uneven light and cast shadows reach. */
export const WALL_GAIN_MIN = 0.45;
export const WALL_GAIN_MAX = 1.25;
/** Fine texture the wall keeps in shadow or other light: this much of the open wall's, plus levels. */
const WALL_TEXTURE_GAIN = 1.5;
const WALL_TEXTURE_SLACK = 0.75;

/**
 * Per pixel outside the background: 1 = looks like the wall in other light and is smooth with
 * the open wall's fine texture, 2 = has the wall's colour at some gain but is not smooth (the
 * last pixels before an edge), 0 = not wall.
 */
export function wallModel(
  background: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  ranges: { r1: Uint8Array; r2: Uint8Array },
  w: number,
  h: number,
  t: number,
): Uint8Array {
  const n = w * h;
  const range5 = ranges.r2;
  const smooth = Math.max(3, Math.ceil(1.5 * t));
  // The wall in shadow or in other light is the same surface: its fine texture (the 3x3 range,
  // averaged over 9x9) stays that of the open wall. Shaded fabric of the wall's colour (a white
  // knit in shade) is as smooth at 5x5 but carries its weave.
  const fine = Float32Array.from(ranges.r1);
  const count = boxSum(new Float32Array(n).fill(1), w, h, 4);
  const texture = boxSum(fine, w, h, 4);
  for (let i = 0; i < n; i++) texture[i] = texture[i]! / count[i]!;
  const open = erode(background, w, h, 4);
  let sum = 0;
  let k = 0;
  for (let i = 0; i < n; i++) if (open[i]) ((sum += texture[i]!), k++);
  const wallTexture = k ? sum / k : 0;
  const textureLimit = WALL_TEXTURE_GAIN * wallTexture + WALL_TEXTURE_SLACK;
  const wall = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (background[i]) continue;
    const o = i * 3;
    const by = 0.299 * surface[o]! + 0.587 * surface[o + 1]! + 0.114 * surface[o + 2]!;
    const iy = 0.299 * rgb[o]! + 0.587 * rgb[o + 1]! + 0.114 * rgb[o + 2]!;
    const s = (iy + 1) / (by + 1);
    if (s < WALL_GAIN_MIN || s > WALL_GAIN_MAX) continue;
    let dev = 0;
    for (let c = 0; c < 3; c++) dev = Math.max(dev, Math.abs(rgb[o + c]! - s * surface[o + c]!));
    if (dev <= t + 2 + 10 * Math.abs(1 - s)) wall[i] = 2;
  }
  for (let i = 0; i < n; i++)
    if (wall[i] === 2 && range5[i]! <= smooth && texture[i]! <= textureLimit) wall[i] = 1;
  return wall;
}

/**
 * Wall beside a figure that the surface fit does not follow: a cast shadow (the wall's chroma at
 * a lower luminance, any size: the shadow of a whole figure is thick) and uneven light (a
 * brighter or darker zone around the figure). Both scale the backdrop's colour by a gain and are
 * smooth: no pixel's 5x5 neighbourhood varies by more than the noise allows, so the flood from
 * the background stops at the first edge (the outline of a figure, a garment's fold or seam).
 */
export function addLitWall(
  background: Uint8Array,
  rgb: Uint8Array,
  surface: Float32Array,
  ranges: { r1: Uint8Array; r2: Uint8Array },
  w: number,
  h: number,
  t: number,
): Uint8Array {
  const n = w * h;
  const wall = wallModel(background, rgb, surface, ranges, w, h, t);
  const seeds = touchingBackground((i) => wall[i] !== 0, background, w);
  const added = new Uint8Array(n);
  flood(added, seeds, w, (j) => wall[j] === 1);
  // Up to the edge: the wall-coloured pixels the 5x5 test held back, a few pixels deep.
  let frontier: number[] = [];
  for (let i = 0; i < n; i++) if (added[i]) frontier.push(i);
  const nb = new Int32Array(4);
  for (let step = 0; step < 3 && frontier.length; step++) {
    const next: number[] = [];
    for (const i of frontier) {
      neighbours4(i, w, n, nb);
      for (let k = 0; k < 4; k++) {
        const j = nb[k]!;
        if (j >= 0 && j < n && !added[j] && !background[j] && wall[j] === 2) {
          added[j] = 1;
          next.push(j);
        }
      }
    }
    frontier = next;
  }
  for (let i = 0; i < n; i++) if (added[i]) background[i] = 1;
  return added;
}
