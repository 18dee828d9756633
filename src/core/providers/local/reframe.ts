/**
 * photo_reframe: exactly the target ratio. When a crop of that ratio can hold the whole subject
 * with a margin, crop around it; otherwise extend the canvas by continuing the photo's own edges
 * (edge pixels carried outwards, then softened), never with bars.
 */
import type { Metadata, OverlayOptions, Sharp } from 'sharp';
import { sharp } from '../../../infra/sharp';
import { decodeMeta, ratioOf, rgbPixels } from './image-io';
import { computeMatte, matteBox } from './remove-background';

export async function reframePhoto(input: Buffer, targetRatio: string): Promise<Buffer> {
  await decodeMeta(input);
  const { data, width: w, height: h } = await rgbPixels(input);
  const ratio = ratioOf(targetRatio, w / h);
  const jpeg = (img: Sharp) => img.jpeg({ quality: 92 }).toBuffer();
  const raw = () => sharp(data, { raw: { width: w, height: h, channels: 3 } });

  // Largest crop of the target ratio inside the photo.
  const cropW = Math.min(w, Math.round(h * ratio));
  const cropH = Math.min(h, Math.round(cropW / ratio));
  const matte = await computeMatte(input);
  const box = matteBox(matte);
  if (box) {
    const sx = w / matte.width;
    const sy = h / matte.height;
    const subject = {
      left: box.left * sx,
      top: box.top * sy,
      right: (box.left + box.width) * sx,
      bottom: (box.top + box.height) * sy,
    };
    const margin = 0.04 * Math.max(cropW, cropH);
    const fits =
      subject.right - subject.left + 2 * margin <= cropW &&
      subject.bottom - subject.top + 2 * margin <= cropH;
    if (fits) {
      const cx = (subject.left + subject.right) / 2;
      const cy = (subject.top + subject.bottom) / 2;
      const left = Math.round(Math.min(w - cropW, Math.max(0, cx - cropW / 2)));
      const top = Math.round(Math.min(h - cropH, Math.max(0, cy - cropH / 2)));
      return jpeg(raw().extract({ left, top, width: cropW, height: cropH }));
    }
  }
  // Extend: the canvas grows on the short axis so the whole photo stays.
  const outW = Math.max(w, Math.round(h * ratio));
  const outH = Math.max(h, Math.round(outW / ratio));
  const left = Math.floor((outW - w) / 2);
  const top = Math.floor((outH - h) / 2);
  const extended = await raw()
    .extend({ left, right: outW - w - left, top, bottom: outH - h - top, extendWith: 'copy' })
    .raw()
    .toBuffer();
  // Soften the carried-out edges so streaks read as background, then put the photo back sharp.
  const soft = await sharp(extended, { raw: { width: outW, height: outH, channels: 3 } })
    .blur(Math.max(2, Math.max(outW, outH) / 150))
    .raw()
    .toBuffer();
  return jpeg(
    sharp(soft, { raw: { width: outW, height: outH, channels: 3 } }).composite([
      { input: data, raw: { width: w, height: h, channels: 3 }, left, top },
    ]),
  );
}
