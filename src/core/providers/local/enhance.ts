/** photo_enhance: a real upscale (Lanczos, 2x by default, never smaller) with an unsharp mask. */
import { decodeMeta, open } from './image-io';

const MAX_PIXELS = 50_000_000;

export async function enhancePhoto(input: Buffer, opts: { scale?: number } = {}): Promise<Buffer> {
  const meta = await decodeMeta(input);
  const swap = (meta.orientation ?? 1) >= 5;
  const width = swap ? meta.height! : meta.width!;
  const height = swap ? meta.width! : meta.height!;
  // Keep huge inputs under ~50 MP, but never shrink them.
  const scale = Math.max(1, Math.min(opts.scale ?? 2, Math.sqrt(MAX_PIXELS / (width * height))));
  const img = open(input)
    .resize(Math.round(width * scale), Math.round(height * scale), { kernel: 'lanczos3' })
    .sharpen({ sigma: 0.8 + scale * 0.3, m1: 0.6, m2: 2.2 });
  switch (meta.format) {
    case 'png':
      return img.png({ compressionLevel: 4, adaptiveFiltering: false }).toBuffer();
    case 'webp':
      return img.webp({ quality: 92 }).toBuffer();
    default:
      return img.jpeg({ quality: 92, mozjpeg: false }).toBuffer();
  }
}
