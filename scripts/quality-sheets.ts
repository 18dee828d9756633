/**
 * Contact sheets of remove_background on the real people photos (issue 11 item 2): every photo of
 * ../shared/eval/people (or DROPSHOOT_EVAL_DIR/people) cut out by the local provider and shown on a
 * checkerboard (what is transparent) and on magenta (what is left of the wall: halo, wall between
 * arm and body, holes). Small JPEG tiles only, written to docs/quality/.
 *
 *   npx tsx scripts/quality-sheets.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp, { type OverlayOptions } from 'sharp';
import { removeBackground } from '../src/core/providers/local/remove-background';

const repo = path.resolve(import.meta.dirname, '..');
const evalDir = process.env.DROPSHOOT_EVAL_DIR ?? path.resolve(repo, '../shared/eval');
const peopleDir = path.join(evalDir, 'people');
const out = path.join(repo, 'docs/quality');
const TILE_HEIGHT = 160;
const PER_ROW = 7;
const GAP = 4;

/** A checkerboard of 8 px squares, the usual picture of transparency. */
async function checkerboard(width: number, height: number): Promise<Buffer> {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = ((x >> 3) + (y >> 3)) % 2 ? 204 : 255;
      data.fill(v, (y * width + x) * 3, (y * width + x) * 3 + 3);
    }
  }
  return sharp(data, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

async function tileOn(cutout: Buffer, backdrop: 'checkerboard' | 'magenta'): Promise<Buffer> {
  const scaled = await sharp(cutout).resize({ height: TILE_HEIGHT }).png().toBuffer();
  const { width, height } = await sharp(scaled).metadata();
  const base =
    backdrop === 'magenta'
      ? sharp({
          create: {
            width: width!,
            height: height!,
            channels: 3,
            background: { r: 255, g: 0, b: 255 },
          },
        })
      : sharp(await checkerboard(width!, height!));
  return base
    .composite([{ input: scaled }])
    .png()
    .toBuffer();
}

async function sheet(tiles: Buffer[], file: string): Promise<void> {
  const sizes = await Promise.all(tiles.map((t) => sharp(t).metadata()));
  const rows = Math.ceil(tiles.length / PER_ROW);
  const rowWidths = Array.from({ length: rows }, (_, r) =>
    sizes.slice(r * PER_ROW, (r + 1) * PER_ROW).reduce((acc, s) => acc + s.width! + GAP, GAP),
  );
  const width = Math.max(...rowWidths);
  const height = rows * (TILE_HEIGHT + GAP) + GAP;
  const placed: OverlayOptions[] = [];
  let x = GAP;
  tiles.forEach((input, k) => {
    if (k % PER_ROW === 0) x = GAP;
    placed.push({ input, left: x, top: GAP + Math.floor(k / PER_ROW) * (TILE_HEIGHT + GAP) });
    x += sizes[k]!.width! + GAP;
  });
  await sharp({ create: { width, height, channels: 3, background: { r: 40, g: 40, b: 40 } } })
    .composite(placed)
    .jpeg({ quality: 82, mozjpeg: true })
    .toFile(file);
}

if (!fs.existsSync(peopleDir)) {
  console.error(`no people photos at ${peopleDir}`);
  process.exit(1);
}
const photos = fs
  .readdirSync(peopleDir)
  .filter((f) => /\.(jpe?g|png)$/i.test(f))
  .sort();
const checker: Buffer[] = [];
const magenta: Buffer[] = [];
for (const name of photos) {
  const cutout = await removeBackground(await fs.promises.readFile(path.join(peopleDir, name)));
  checker.push(await tileOn(cutout, 'checkerboard'));
  magenta.push(await tileOn(cutout, 'magenta'));
  console.log(`cut out ${name}`);
}
fs.mkdirSync(out, { recursive: true });
await sheet(checker, path.join(out, 'people-cutouts-checkerboard.jpg'));
await sheet(magenta, path.join(out, 'people-cutouts-magenta.jpg'));
console.log(
  `${photos.length} people photos: ${path.relative(repo, out)}/people-cutouts-{checkerboard,magenta}.jpg (in the order of ${photos.join(', ')})`,
);
