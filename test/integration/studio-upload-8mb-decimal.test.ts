/**
 * Spec 4.5's "Maximum 8 MB" read in decimal units: a service refusing uploads past 8,000,000 bytes
 * answered 413 to a photo of 8,000,001 to 8,388,608 bytes, sent as it was since Dropshoot planned
 * for 8 MiB; the photo failed for good, every run (review rev27 D2). Against the reference /v1
 * service (written from the spec alone, `uploadLimitBytes: 8000000`), through `run`'s own path.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareForUpload } from '../../src/studio/prepare';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'upload-8mb@ref.test';

/** A PNG of noise (barely compressible) between 8,000,000 and 8 MiB bytes. */
async function noisePng(file: string): Promise<number> {
  const side = 1640;
  let seed = 12345;
  const pixels = Buffer.alloc(side * side * 3);
  for (let i = 0; i < pixels.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) | 0;
    pixels[i] = (seed >>> 16) & 0xff;
  }
  await sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 9 })
    .toFile(file);
  return fs.statSync(file).size;
}

describe("a photo over the service's upload limit", () => {
  it('is re-encoded under 8,000,000 bytes and made, paid once', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 13, timeScale: 0.01, jobSeconds: [20, 20], uploadLimitBytes: 8_000_000 },
      photos: 0,
    });
    const size = await noisePng(path.join(w.inDir, 'big.png'));
    expect(size).toBeGreaterThan(8_000_000);
    expect(size).toBeLessThanOrEqual(8 * 1024 * 1024);
    // Before: failed 'Upload larger than 8 MB', 0 exported, every run.
    // Photos prepared for upload as `run` prepares them.
    const first = await runOnWorld(w, {
      engine: { prepareUpload: prepareForUpload },
      signal: AbortSignal.timeout(60_000),
    });
    expect(first.failed.map((f) => f.reason)).toEqual([]);
    expect(first.exported).toBe(1);
    expect(chargedTo(w.service, EMAIL)).toBe(1);
    const uploads = w.service.requests().filter((r) => r.path === '/v1/uploads');
    expect(uploads).toHaveLength(1);
  }, 120_000);

  it('refused 413 under a limit below 8 MB: re-encoded smaller and uploaded once more, made, paid once', async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-413-'));
    cleanups.push(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const photo = path.join(scratch, 'big.png');
    await noisePng(photo);
    // A service whose limit is one byte below the photo as Dropshoot prepares it.
    const planned = (await prepareForUpload(fs.readFileSync(photo))).length;
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 13, timeScale: 0.01, jobSeconds: [20, 20], uploadLimitBytes: planned - 1 },
      photos: 0,
    });
    fs.copyFileSync(photo, path.join(w.inDir, 'big.png'));
    // Before: failed 'Upload larger than 8 MB' at the first 413, every run.
    const first = await runOnWorld(w, {
      engine: { prepareUpload: prepareForUpload },
      signal: AbortSignal.timeout(60_000),
    });
    expect(first.failed.map((f) => f.reason)).toEqual([]);
    expect(first.exported).toBe(1);
    expect(chargedTo(w.service, EMAIL)).toBe(1);
    const uploads = w.service.requests().filter((r) => r.path === '/v1/uploads');
    expect(uploads).toHaveLength(2);
  }, 120_000);
});
