/**
 * Icons for every platform from one vector source (resources/icon.svg): PNG sizes for Linux,
 * a multi-size .ico for Windows (PNG-compressed entries) and an .icns for macOS (PNG entries),
 * written to resources/build. Run: `npm run icons`.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

const root = path.resolve(import.meta.dirname, '..');
const svg = fs.readFileSync(path.join(root, 'resources/icon.svg'));
const out = path.join(root, 'resources/build');
const render = (size: number) =>
  sharp(svg, { density: Math.max(72, (72 * size) / 1024) * 4 })
    .resize(size, size)
    .png()
    .toBuffer();

/** ICO: header, directory, then PNG images (Vista+ reads PNG entries). */
function ico(images: { size: number; png: Buffer }[]): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(images.length, 4);
  let offset = 6 + 16 * images.length;
  const entries = images.map(({ size, png }) => {
    const entry = Buffer.alloc(16);
    entry.writeUInt8(size >= 256 ? 0 : size, 0);
    entry.writeUInt8(size >= 256 ? 0 : size, 1);
    entry.writeUInt16LE(1, 4);
    entry.writeUInt16LE(32, 6);
    entry.writeUInt32LE(png.length, 8);
    entry.writeUInt32LE(offset, 12);
    offset += png.length;
    return entry;
  });
  return Buffer.concat([header, ...entries, ...images.map((i) => i.png)]);
}

/** ICNS: 'icns' + length, then typed PNG chunks. */
function icns(images: { type: string; png: Buffer }[]): Buffer {
  const chunks = images.map(({ type, png }) => {
    const head = Buffer.alloc(8);
    head.write(type, 0, 'ascii');
    head.writeUInt32BE(png.length + 8, 4);
    return Buffer.concat([head, png]);
  });
  const body = Buffer.concat(chunks);
  const head = Buffer.alloc(8);
  head.write('icns', 0, 'ascii');
  head.writeUInt32BE(body.length + 8, 4);
  return Buffer.concat([head, body]);
}

fs.mkdirSync(path.join(out, 'icons'), { recursive: true });
const sizes = [16, 32, 48, 64, 128, 256, 512, 1024];
const pngs = new Map<number, Buffer>();
for (const size of sizes) pngs.set(size, await render(size));
for (const size of sizes.filter((s) => s <= 512))
  fs.writeFileSync(path.join(out, 'icons', `${size}x${size}.png`), pngs.get(size)!);
fs.writeFileSync(path.join(out, 'icon.png'), pngs.get(1024)!);
fs.writeFileSync(
  path.join(out, 'icon.ico'),
  ico([16, 32, 48, 64, 128, 256].map((size) => ({ size, png: pngs.get(size)! }))),
);
fs.writeFileSync(
  path.join(out, 'icon.icns'),
  icns([
    { type: 'icp4', png: pngs.get(16)! },
    { type: 'icp5', png: pngs.get(32)! },
    { type: 'icp6', png: pngs.get(64)! },
    { type: 'ic07', png: pngs.get(128)! },
    { type: 'ic08', png: pngs.get(256)! },
    { type: 'ic09', png: pngs.get(512)! },
    { type: 'ic10', png: pngs.get(1024)! },
  ]),
);
process.stdout.write(`icons written to ${path.relative(root, out)}\n`);
