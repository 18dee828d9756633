/**
 * A copy whose second half is zeros (a file system that preallocates the full size, the copy cut
 * short) is not a complete photo: the stability check refuses it, on every real photo of
 * ../shared/eval (read in place; only the damaged copies are written, to a temporary folder),
 * while every photo there as it is still passes. `run` over such a copy spends nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkStableFile } from '../../src/studio/watch/stable-file';
import { EVAL_DIR } from '../bench/quality';
import { referenceWorld, runOnWorld } from './helpers/reference-studio';

vi.setConfig({ testTimeout: 180_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const present = fs.existsSync(path.join(EVAL_DIR, 'garments'));
if (!present) console.log('zeroed copies of real photos skipped: ../shared/eval is missing');

const evalPhotos = (): string[] =>
  ['garments', 'people'].flatMap((dir) =>
    fs
      .readdirSync(path.join(EVAL_DIR, dir))
      .filter((name) => /\.(jpe?g|png)$/i.test(name))
      .sort()
      .map((name) => path.join(EVAL_DIR, dir, name)),
  );

/** The photo's bytes with everything from the middle on overwritten with zeros. */
const zeroedSecondHalf = (file: string): Buffer => {
  const bytes = fs.readFileSync(file);
  return bytes.fill(0, Math.floor(bytes.length / 2));
};

const check = (file: string) => checkStableFile(file, { settleMs: 5, decodeRetries: 0 });

function scratchDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-zeroed-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe.skipIf(!present)('a copy whose second half is zeros', () => {
  it('every eval photo passes the check as it is, and its zeroed copy is refused', async () => {
    const dir = scratchDir();
    const photos = evalPhotos();
    expect(photos.length).toBeGreaterThanOrEqual(69);
    const refusedAsIs: string[] = [];
    const zeroedPassed: string[] = [];
    for (const photo of photos) {
      const name = `${path.basename(path.dirname(photo))}-${path.basename(photo)}`;
      if ((await check(photo)).kind !== 'ready') refusedAsIs.push(name);
      const copy = path.join(dir, name);
      fs.writeFileSync(copy, zeroedSecondHalf(photo));
      const zeroed = await check(copy);
      if (zeroed.kind !== 'rejected') zeroedPassed.push(name);
      else expect(zeroed.reason).toMatch(/incomplete/);
    }
    expect(refusedAsIs).toEqual([]);
    expect(zeroedPassed).toEqual([]);
  });

  it('as WebP (lossy, lossless, with alpha): every photo passes as it is; zeroed from the middle on, or in the middle only, refused', async () => {
    const dir = scratchDir();
    const photos = evalPhotos();
    const refusedAsIs: string[] = [];
    const zeroedPassed: string[] = [];
    for (const [i, photo] of photos.entries()) {
      // Lossless is slow to encode: every fourth photo, and one with an alpha channel.
      const variants = [{ lossless: false, alpha: false }];
      if (i % 4 === 0) variants.push({ lossless: true, alpha: i === 0 });
      for (const { lossless, alpha } of variants) {
        const image = sharp(photo).resize({ width: 640, withoutEnlargement: true });
        const webp = await (alpha ? image.ensureAlpha(0.8) : image)
          .webp({ quality: 85, lossless })
          .toBuffer();
        const name = `${path.basename(photo)}-${lossless ? 'lossless' : 'lossy'}${alpha ? '-alpha' : ''}`;
        const asIs = path.join(dir, `${name}.webp`);
        fs.writeFileSync(asIs, webp);
        if ((await check(asIs)).kind !== 'ready') refusedAsIs.push(name);
        const cut = Math.floor(webp.length / 2);
        const damaged = {
          fromMiddle: Buffer.from(webp).fill(0, cut),
          middleOnly: Buffer.from(webp).fill(0, cut - 1024, cut + 1024),
        };
        for (const [how, bytes] of Object.entries(damaged)) {
          const copy = path.join(dir, `${name}-${how}.webp`);
          fs.writeFileSync(copy, bytes);
          const zeroed = await check(copy);
          if (zeroed.kind !== 'rejected') zeroedPassed.push(`${name} ${how}`);
          else expect(zeroed.reason).toMatch(/incomplete|damaged/);
        }
      }
    }
    expect(refusedAsIs).toEqual([]);
    // Before: 25 of 40 zeroed WebP copies passed the check.
    expect(zeroedPassed).toEqual([]);
  });

  it('`run` over the zeroed copy of 048769_1 uploads nothing and spends nothing', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'zeroed@example.com',
      diamonds: 100,
      photos: 0,
      service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 20] },
    });
    const source = path.join(EVAL_DIR, 'garments', '048769_1.jpg');
    fs.writeFileSync(path.join(w.inDir, '048769_1.jpg'), zeroedSecondHalf(source));
    const summary = await runOnWorld(w);
    expect(summary.exported).toBe(0);
    expect(summary.failed.map((f) => f.name)).toEqual(['048769_1.jpg']);
    expect(summary.failed[0]!.reason).toMatch(/incomplete/);
    expect(w.service.requests().filter((r) => r.path === '/v1/uploads')).toEqual([]);
    expect(w.service.jobs('zeroed@example.com')).toEqual([]);
    expect(w.service.balance('zeroed@example.com')).toBe(100);
  });
});
