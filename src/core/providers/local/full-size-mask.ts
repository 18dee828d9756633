/**
 * A garment's mask, found on a small working grid, brought to the photo's full size with a smooth
 * outline. Scaled up as it is, each working pixel becomes a block and the outline a staircase;
 * blurred by most of a block and cut again at its middle with a ramp of about two pixels, the
 * outline follows the curve the blocks approximate. Along the figure's own outline the garment
 * is not cut at all: the cut-out's full-size alpha already draws it there.
 */
import { sharp } from '../../../infra/sharp';
import { dilate } from './matting/morphology';

/** Blur, in working pixels: enough to melt a block's corners, not a strap a few blocks wide. */
const SMOOTH = 0.8;
/** Full-size pixels over which the cut ramps from garment to not garment. */
const RAMP = 1.5;

/**
 * The garment `region` (1 = garment) on the w x h grid where `fig` marks the figure, as a W x H
 * single-channel mask (255 = garment) with a smooth, anti-aliased outline.
 */
export async function fullSizeMask(
  region: Uint8Array,
  fig: Uint8Array,
  w: number,
  h: number,
  W: number,
  H: number,
): Promise<Buffer> {
  // Outside the figure next to the garment counts as garment: the cut there is the cut-out's.
  const near = dilate(region, w, h, 1);
  const field = Buffer.alloc(w * h);
  for (let i = 0; i < w * h; i++) field[i] = region[i] || (near[i] && !fig[i]) ? 255 : 0;
  const scale = Math.max(W / w, H / h);
  const sigma = Math.max(0.3, SMOOTH * scale);
  const smooth = await sharp(field, { raw: { width: w, height: h, channels: 1 } })
    .resize(W, H, { fit: 'fill', kernel: 'linear' })
    .blur(sigma)
    .extractChannel(0) // one-channel raw input comes back as three channels
    .raw()
    .toBuffer();
  // A blurred step rises by about 1/(2.5 sigma) of its height per pixel at its middle.
  const gain = Math.max(1, (2.5 * sigma) / RAMP);
  const out = Buffer.alloc(W * H);
  for (let i = 0; i < W * H; i++)
    out[i] = Math.max(0, Math.min(255, Math.round((smooth[i]! - 127.5) * gain + 127.5)));
  return out;
}
