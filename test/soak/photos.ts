/**
 * Small real JPEGs with distinct content (each a clear colour of its own), and the reverse: which
 * photo an uploaded (possibly re-encoded) image is, by its mean colour.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

export type Photo = {
  index: number;
  rel: string;
  stem: string;
  dir: string;
  rgb: [number, number, number];
};

/** Colours far apart in RGB so re-encoding never confuses two photos. */
function colour(index: number): [number, number, number] {
  const levels = [20, 120, 230];
  return [
    levels[index % 3]!,
    levels[Math.floor(index / 3) % 3]!,
    levels[Math.floor(index / 9) % 3]!,
  ];
}

/** Writes `count` photos under `inDir`, every third one in `sub/` (whose export can be blocked). */
export async function makePhotos(inDir: string, count: number): Promise<Photo[]> {
  if (count > 27) throw new Error('at most 27 distinct photos');
  const photos: Photo[] = [];
  for (let index = 0; index < count; index++) {
    const dir = index % 3 === 2 ? 'sub' : '';
    const stem = `p${String(index).padStart(2, '0')}`;
    const rel = dir ? `${dir}/${stem}.jpg` : `${stem}.jpg`;
    fs.mkdirSync(path.join(inDir, dir), { recursive: true });
    const rgb = colour(index);
    // A small darker square keeps it a "product photo" rather than a flat card.
    const square = await sharp({
      create: {
        width: 40,
        height: 60,
        channels: 3,
        background: { r: rgb[0] / 2, g: rgb[1] / 2, b: rgb[2] / 2 },
      },
    })
      .png()
      .toBuffer();
    await sharp({
      create: {
        width: 160,
        height: 200,
        channels: 3,
        background: { r: rgb[0], g: rgb[1], b: rgb[2] },
      },
    })
      .composite([{ input: square, top: 70, left: 60 }])
      .jpeg({ quality: 90 })
      .toFile(path.join(inDir, rel));
    photos.push({ index, rel, stem, dir, rgb });
  }
  return photos;
}

export async function identifyPhoto(bytes: Buffer, photos: Photo[]): Promise<Photo | null> {
  try {
    const { channels } = await sharp(bytes).removeAlpha().resize(8, 8, { fit: 'fill' }).stats();
    const mean = channels.slice(0, 3).map((c) => c.mean);
    let best: Photo | null = null;
    let bestDistance = Infinity;
    for (const photo of photos) {
      // Compare against the photo's own mean (background plus the darker square).
      const expected = photo.rgb.map((v) => v * (1 - 0.075) + (v / 2) * 0.075);
      const distance = expected.reduce((sum, v, i) => sum + (v - mean[i]!) ** 2, 0);
      if (distance < bestDistance) {
        bestDistance = distance;
        best = photo;
      }
    }
    return bestDistance < 40 ** 2 ? best : null;
  } catch {
    return null;
  }
}
