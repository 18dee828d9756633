/**
 * Pixel analysis shared by rendering and compliance: the studio background colour, the product's
 * bounding box, and knocking an off-white studio background out to pure white.
 * Works on interleaved 8-bit raw buffers with 3 (RGB) or 4 (RGBA) channels.
 */
export type RawImage = { data: Uint8Array; width: number; height: number; channels: 3 | 4 };
export type Rgb = { r: number; g: number; b: number };
export type Box = { left: number; top: number; width: number; height: number };

export const WHITE: Rgb = { r: 255, g: 255, b: 255 };

/** Max per-channel difference from the background for a pixel still to count as background. */
export const DEFAULT_TOLERANCE = 28;

/** The median colour of the opaque border pixels: the seamless paper the product stands on. */
export function estimateBackground(img: RawImage): Rgb {
  const rs: number[] = [];
  const gs: number[] = [];
  const bs: number[] = [];
  forEachBorderPixel(img, (i) => {
    if (img.channels === 4 && (img.data[i + 3] ?? 0) < 128) return;
    rs.push(img.data[i] ?? 0);
    gs.push(img.data[i + 1] ?? 0);
    bs.push(img.data[i + 2] ?? 0);
  });
  if (rs.length === 0) return WHITE; // fully transparent border: it will be flattened onto white
  return { r: median(rs), g: median(gs), b: median(bs) };
}

export function isBackgroundPixel(img: RawImage, i: number, bg: Rgb, tolerance: number): boolean {
  const d = img.data;
  if (img.channels === 4 && (d[i + 3] ?? 0) < 128) return true;
  return (
    Math.abs((d[i] ?? 0) - bg.r) <= tolerance &&
    Math.abs((d[i + 1] ?? 0) - bg.g) <= tolerance &&
    Math.abs((d[i + 2] ?? 0) - bg.b) <= tolerance
  );
}

/**
 * Bounding box of the product: rows and columns holding enough non-background pixels. The
 * minimum count keeps sensor noise, dust and JPEG speckle from stretching the box.
 */
export function productBox(
  img: RawImage,
  bg: Rgb = estimateBackground(img),
  tolerance = DEFAULT_TOLERANCE,
): Box | null {
  return boxOf(img, (i) => isBackgroundPixel(img, i, bg, tolerance));
}

/** A side edge's backdrop: `edge` bridged over the subject, `raw` as it is (`backdropLine`'s). */
export type SideEdge = { edge: Float32Array; raw: Float32Array };

/**
 * `productBox` read against the backdrop row by row: each row's background runs from the left
 * edge's backdrop colour to the right edge's (RGBA per row, as `backdropLine` gives them). A wall
 * lit unevenly is then background; read against the border's one median colour it made the
 * product span the whole width. Rows of a seam (`seamRows`: where a wall meets a floor of another
 * colour) are read against the edges as they are, and count only in the columns the rest of the
 * photo finds product in: bridged, the seam's shadow or cove line read as product from side to
 * side and the box spanned the width (052767_0's Shopify square was cropped at the knees).
 */
export function productBoxAcrossRows(
  img: RawImage,
  left: SideEdge,
  right: SideEdge,
  tolerance = DEFAULT_TOLERANCE,
  seam = seamRows(left, right, img.height, tolerance),
): Box | null {
  const { width, channels } = img;
  const here = { r: 0, g: 0, b: 0 };
  return boxOf(
    img,
    (i) => {
      const p = i / channels;
      const y = Math.floor(p / width);
      const t = (p - y * width) / Math.max(1, width - 1);
      const l = seam[y] ? left.raw : left.edge;
      const r = seam[y] ? right.raw : right.edge;
      here.r = l[y * 4]! + (r[y * 4]! - l[y * 4]!) * t;
      here.g = l[y * 4 + 1]! + (r[y * 4 + 1]! - l[y * 4 + 1]!) * t;
      here.b = l[y * 4 + 2]! + (r[y * 4 + 2]! - l[y * 4 + 2]!) * t;
      return isBackgroundPixel(img, i, here, tolerance);
    },
    seam,
  );
}

/** Levels a side edge pixel lies off its bridged backdrop from which it was bridged over. */
const OFF_EDGE = 12;
/** A seam's band (shadow line, cove) is at most this share of the height on a side edge. */
const MAX_SEAM_SHARE = 0.12;
/** A seam's soft shoulders (share of the height) beyond the bridged band: the edge's trend follows them. */
const SEAM_SHOULDER_SHARE = 0.01;
/** Bridged stretches this close (share of the height) are one band (a cove, then a shadow line). */
const SEAM_JOIN_SHARE = 0.02;
/** Seam stretches on the two sides this far apart (share of the height) are one tilted seam. */
const SEAM_TILT_SHARE = 0.03;

/**
 * Rows where the backdrop changes from one colour to another right across the frame (a wall
 * meeting a floor): a bridged band of a side edge, no thicker than `MAX_SEAM_SHARE` of the
 * height, with backdrops differing by more than `tolerance` beyond it on either side (compared
 * one band's thickness away, past the seam's soft shoulders), widened by its shoulders; the
 * other side's bridged bands that overlap it, and the rows between the two sides' (a tilted seam
 * crosses the frame there).
 * A product touching both sides (a wide garment, a scarf laid across) has the same backdrop
 * above and below it, so it is not a seam.
 */
export function seamRows(
  left: SideEdge,
  right: SideEdge,
  height: number,
  tolerance: number,
): Uint8Array {
  const runs: { from: number; to: number; step: boolean; side: number }[] = [];
  [left, right].forEach(({ edge, raw }, side) => {
    const off = (y: number) =>
      [0, 1, 2].some((c) => Math.abs(raw[y * 4 + c]! - edge[y * 4 + c]!) > OFF_EDGE);
    const mean = (from: number, to: number, c: number) => {
      const a = Math.max(0, from);
      const b = Math.min(height, to);
      let sum = 0;
      for (let y = a; y < b; y++) sum += edge[y * 4 + c]!;
      return b > a ? sum / (b - a) : NaN;
    };
    const join = Math.round(SEAM_JOIN_SHARE * height);
    for (let y = 0; y < height;) {
      if (!off(y)) {
        y++;
        continue;
      }
      const from = y;
      let to = y;
      while (y < height && y - to <= join) if (off(y++)) to = y;
      y = to;
      // Running off the frame: no backdrop beyond it to compare.
      if (from === 0 || to === height || to - from > MAX_SEAM_SHARE * height) continue;
      const shoulder = Math.round(SEAM_SHOULDER_SHARE * height);
      const gap = Math.max(to - from, shoulder);
      const step = [0, 1, 2].some(
        (c) =>
          Math.abs(mean(from - 2 * gap, from - gap, c) - mean(to + gap, to + 2 * gap, c)) >
          tolerance,
      );
      // Widened by its shoulders: the soft edges of a shadow or cove line, which the edge's trend
      // follows (not bridged), still cross the frame on a slant when it is tilted.
      runs.push({
        from: Math.max(0, from - shoulder),
        to: Math.min(height, to + shoulder),
        step,
        side,
      });
    }
  });
  const seam = new Uint8Array(height);
  const steps = runs.filter((run) => run.step);
  for (const run of steps) seam.fill(1, run.from, run.to);
  // The same seam need not step on the other side (052767_0's wall is shaded there to the
  // floor's colour): its bridged band there still belongs to it.
  const overlapping = runs.filter(
    (run) => !run.step && seam.subarray(run.from, run.to).includes(1),
  );
  const bands = [...steps, ...overlapping];
  for (const run of overlapping) seam.fill(1, run.from, run.to);
  const tilt = Math.round(SEAM_TILT_SHARE * height);
  for (const a of bands)
    for (const b of bands)
      if (a.side === 0 && b.side === 1) {
        const from = Math.min(a.to, b.to);
        const to = Math.max(a.from, b.from);
        if (to > from && to - from <= tilt) seam.fill(1, from, to);
      }
  return seam;
}

function boxOf(
  img: RawImage,
  isBackground: (offset: number) => boolean,
  seam?: Uint8Array,
): Box | null {
  const { width, height, channels } = img;
  const rowCounts = new Uint32Array(height);
  const colCounts = new Uint32Array(width);
  const seamProduct: number[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (isBackground((y * width + x) * channels)) continue;
      if (seam?.[y]) {
        seamProduct.push(y * width + x);
        continue;
      }
      rowCounts[y] = (rowCounts[y] ?? 0) + 1;
      colCounts[x] = (colCounts[x] ?? 0) + 1;
    }
  }
  const minRow = Math.max(1, Math.round(width * 0.002));
  const minCol = Math.max(1, Math.round(height * 0.002));
  // A seam row holds product only where the figure crosses it: in columns found elsewhere.
  for (const p of seamProduct) {
    const y = Math.floor(p / width);
    if ((colCounts[p - y * width] ?? 0) >= minCol) rowCounts[y] = (rowCounts[y] ?? 0) + 1;
  }
  const top = rowCounts.findIndex((c) => c >= minRow);
  const bottom = rowCounts.findLastIndex((c) => c >= minRow);
  const left = colCounts.findIndex((c) => c >= minCol);
  const right = colCounts.findLastIndex((c) => c >= minCol);
  if (top < 0 || left < 0) return null;
  return { left, top, width: right - left + 1, height: bottom - top + 1 };
}

/** The share of the frame the product fills along its dominant dimension (Amazon's rule). */
export function fillRatio(box: Box | null, width: number, height: number): number {
  if (!box) return 0;
  return Math.max(box.width / width, box.height / height);
}

/**
 * Sets to pure white every background-coloured pixel connected to the border (4-connected
 * flood fill), so an off-white studio sweep becomes 255,255,255 while light areas inside the
 * garment, which the sweep cannot reach, keep their colour. Mutates `img`.
 */
export function whitenBackground(img: RawImage, bg: Rgb, tolerance = DEFAULT_TOLERANCE): void {
  const { width, height, channels, data } = img;
  const seen = new Uint8Array(width * height);
  const stack = new Int32Array(width * height);
  let top = 0;
  const push = (p: number): void => {
    if (seen[p] === 1) return;
    seen[p] = 1;
    if (isBackgroundPixel(img, p * channels, bg, tolerance)) stack[top++] = p;
  };
  for (let x = 0; x < width; x++) {
    push(x);
    push((height - 1) * width + x);
  }
  for (let y = 0; y < height; y++) {
    push(y * width);
    push(y * width + width - 1);
  }
  while (top > 0) {
    const p = stack[--top] ?? 0;
    const i = p * channels;
    data[i] = 255;
    data[i + 1] = 255;
    data[i + 2] = 255;
    if (channels === 4) data[i + 3] = 255;
    const x = p % width;
    if (x > 0) push(p - 1);
    if (x < width - 1) push(p + 1);
    if (p >= width) push(p - width);
    if (p < width * (height - 1)) push(p + width);
  }
}

export function forEachBorderPixel(img: RawImage, visit: (offset: number) => void): void {
  const { width, height, channels } = img;
  for (let x = 0; x < width; x++) {
    visit(x * channels);
    if (height > 1) visit(((height - 1) * width + x) * channels);
  }
  for (let y = 1; y < height - 1; y++) {
    visit(y * width * channels);
    if (width > 1) visit((y * width + width - 1) * channels);
  }
}

function median(values: number[]): number {
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)] ?? 0;
}
