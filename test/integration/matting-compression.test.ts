/**
 * The compression noise the cut-out allows for is read from the file's own quantisation tables
 * (compression.ts): real JPEGs encoded by sharp (libjpeg's scaled standard tables), as buffers
 * and as files; anything else carries no JPEG noise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { compressionRinging, jpegTables } from '../../src/core/providers/local/matting/compression';

const grey = () =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 90, b: 40 } } });

describe('JPEG compression noise from the quantisation tables', () => {
  it('reads the standard tables of quality 50 in zig-zag order, luma then chroma', async () => {
    const tables = jpegTables(await grey().jpeg({ quality: 50 }).toBuffer());
    expect(tables[0]!.slice(0, 4)).toEqual([16, 11, 12, 14]);
    expect(tables[1]!.slice(0, 4)).toEqual([17, 18, 18, 24]);
  });

  it('grows as quality falls and shrinks with the scale the photo is read at', async () => {
    const at = async (quality: number) =>
      await compressionRinging(await grey().jpeg({ quality }).toBuffer(), 1);
    const [q95, q75, q60] = [await at(95), await at(75), await at(60)];
    expect(q95).toBeLessThan(2);
    expect(q75).toBeGreaterThan(q95);
    expect(q60).toBeGreaterThan(q75);
    expect(q60).toBeGreaterThan(7);
    const half = await compressionRinging(await grey().jpeg({ quality: 60 }).toBuffer(), 0.5);
    expect(half).toBeCloseTo(q60 / 2, 6);
  });

  it('reads a file path like a buffer, and finds none in a PNG', async () => {
    const jpeg = await grey().jpeg({ quality: 60 }).toBuffer();
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ringing-')), 'photo.jpg');
    fs.writeFileSync(file, jpeg);
    expect(await compressionRinging(file, 1)).toBe(await compressionRinging(jpeg, 1));
    expect(await compressionRinging(await grey().png().toBuffer(), 1)).toBe(0);
    fs.rmSync(path.dirname(file), { recursive: true });
  });
});
