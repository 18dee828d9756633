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

/**
 * `productBox` read against the backdrop row by row: each row's background runs from the left
 * edge's backdrop colour to the right edge's (`left`, `right`: RGBA per row, as
 * `backdropLine`'s `edge` gives them). A wall lit unevenly is then background; read against the
 * border's one median colour it made the product span the whole width.
 */
export function productBoxAcrossRows(
  img: RawImage,
  left: Float32Array,
  right: Float32Array,
  tolerance = DEFAULT_TOLERANCE,
): Box | null {
  const { width, channels } = img;
  const here = { r: 0, g: 0, b: 0 };
  return boxOf(img, (i) => {
    const p = i / channels;
    const y = Math.floor(p / width);
    const t = (p - y * width) / Math.max(1, width - 1);
    here.r = left[y * 4]! + (right[y * 4]! - left[y * 4]!) * t;
    here.g = left[y * 4 + 1]! + (right[y * 4 + 1]! - left[y * 4 + 1]!) * t;
    here.b = left[y * 4 + 2]! + (right[y * 4 + 2]! - left[y * 4 + 2]!) * t;
    return isBackgroundPixel(img, i, here, tolerance);
  });
}

function boxOf(img: RawImage, isBackground: (offset: number) => boolean): Box | null {
  const { width, height, channels } = img;
  const rowCounts = new Uint32Array(height);
  const colCounts = new Uint32Array(width);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!isBackground((y * width + x) * channels)) {
        rowCounts[y] = (rowCounts[y] ?? 0) + 1;
        colCounts[x] = (colCounts[x] ?? 0) + 1;
      }
    }
  }
  const minRow = Math.max(1, Math.round(width * 0.002));
  const minCol = Math.max(1, Math.round(height * 0.002));
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
