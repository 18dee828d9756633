/** Helpers shared by the benchmarks: temp folders, test photos, child servers, result rows. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

export type Row = { name: string; measured: string; ratio: number; target: string; pass: boolean };

export function tempDir(tag: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-bench-${tag}-`));
}

/** A product-like photo: a textured garment shape on a seamless gradient with noise, as JPEG. */
export async function productPhoto(width: number, height: number, hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="bg" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#f7f7f5"/><stop offset="1" stop-color="#dcdad5"/></linearGradient>
    <pattern id="p" width="${width / 40}" height="${width / 40}" patternUnits="userSpaceOnUse"><rect width="100%" height="100%" fill="hsl(${hue},60%,45%)"/><circle cx="${width / 80}" cy="${width / 80}" r="${width / 200}" fill="hsl(${hue},60%,35%)"/></pattern>
    <filter id="n"><feTurbulence type="fractalNoise" baseFrequency="0.8" numOctaves="1"/><feColorMatrix values="0 0 0 0 0.5  0 0 0 0 0.5  0 0 0 0 0.5  0 0 0 0.06 0"/></filter></defs>
    <rect width="100%" height="100%" fill="url(#bg)"/>
    <path d="M${width * 0.3} ${height * 0.18} L${width * 0.42} ${height * 0.15} Q${width * 0.5} ${height * 0.2} ${width * 0.58} ${height * 0.15} L${width * 0.7} ${height * 0.18} L${width * 0.85} ${height * 0.32} L${width * 0.76} ${height * 0.38} L${width * 0.69} ${height * 0.33} L${width * 0.69} ${height * 0.84} L${width * 0.31} ${height * 0.84} L${width * 0.31} ${height * 0.33} L${width * 0.24} ${height * 0.38} L${width * 0.15} ${height * 0.32} Z" fill="url(#p)"/>
    <rect width="100%" height="100%" filter="url(#n)"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 90 }).toBuffer();
}

/** Writes `count` photos built from 5 base images with per-photo variation (no two identical). */
export async function writePhotos(
  dir: string,
  count: number,
  width: number,
  height: number,
): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const bases = await Promise.all([0, 1, 2, 3, 4].map((i) => productPhoto(width, height, i * 70)));
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const base = bases[i % bases.length]!;
    // A small patch of varying shade changes the pixels a little; JPEG quantisation can still make
    // two patches equal, so the photo number in EXIF keeps every file distinct.
    const patch = { r: i % 256, g: Math.floor(i / 256) % 256, b: 200 };
    const varied = await sharp(base)
      .composite([
        {
          input: { create: { width: 8, height: 8, channels: 3, background: patch } },
          left: 0,
          top: 0,
        },
      ])
      .withExif({ IFD0: { ImageDescription: `bench photo ${i}` } })
      .jpeg({ quality: 90 })
      .toBuffer();
    const file = path.join(dir, `photo-${String(i).padStart(4, '0')}.jpg`);
    fs.writeFileSync(file, varied);
    files.push(file);
  }
  return files;
}

/** Starts test/bench/server-child.ts in its own process and waits for its URL. */
export function startChild(
  args: string[],
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const script = path.join(import.meta.dirname, 'server-child.ts');
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_CHILD_ARGS?.split(' ').filter(Boolean) ?? []),
      '--import',
      'tsx',
      script,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        const { url } = JSON.parse(line) as { url: string };
        resolve({
          url,
          child,
          stop: () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`bench server exited (${code})`)));
  });
}

export const fmt = (n: number, digits = 2) => n.toFixed(digits);
