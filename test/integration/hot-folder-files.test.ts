import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isIgnored } from '../../src/studio/watch/ignore';
import {
  prepareUpload,
  UnsupportedImageError,
  UPLOAD_LIMIT_BYTES,
} from '../../src/studio/watch/prepare-upload';
import { hasCompleteTrailer, sniffFormat } from '../../src/studio/watch/sniff';
import {
  CAN_DECODE_HEIC,
  checkStableFile,
  isobmffComplete,
} from '../../src/studio/watch/stable-file';
import { makeHeic } from './helpers/heic';
import { noisyJpeg } from './helpers/images';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-watch-unit-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const solid = (
  format: 'jpeg' | 'png' | 'webp' | 'tiff' | 'avif',
  w = 64,
  h = 48,
): Promise<Buffer> =>
  sharp({ create: { width: w, height: h, channels: 3, background: { r: 200, g: 30, b: 60 } } })
    .toFormat(format)
    .toBuffer();

describe('ignore rules', () => {
  it.each([
    '.DS_Store',
    'sub/.DS_Store',
    '._look.jpg',
    '.hidden/look.jpg',
    'Thumbs.db',
    'THUMBS.DB',
    'desktop.ini',
    '~$brief.docx',
    'look.jpg.part',
    'look.jpg.crdownload',
    'look.tmp',
    'sub/look.JPG.TMP',
    '.look.jpg.a1b2c3.tmp',
    'done',
    'done/look.jpg',
    'failed/sub/look.jpg',
    'failed/look.jpg.reason.txt',
    'Done/look.jpg',
  ])('ignores %s', (p) => {
    expect(isIgnored(p)).toBe(true);
  });

  it.each([
    'look.jpg',
    'sub/look.png',
    'brand/done/look.jpg',
    'brand/failed',
    'done-looks/a.jpg',
    '',
  ])('keeps %j', (p) => {
    expect(isIgnored(p)).toBe(false);
  });

  it('accepts Windows separators', () => {
    expect(isIgnored('done\\sub\\look.jpg')).toBe(true);
    expect(isIgnored('sub\\look.jpg')).toBe(false);
  });
});

describe('format sniffing', () => {
  it('recognises formats by signature, not extension', async () => {
    for (const format of ['jpeg', 'png', 'webp', 'tiff', 'avif'] as const) {
      expect(sniffFormat(await solid(format))).toBe(format);
    }
    const heicHead = Buffer.concat([
      Buffer.from([0, 0, 0, 24]),
      Buffer.from('ftypheic\0\0\0\0mif1heic', 'latin1'),
    ]);
    expect(sniffFormat(heicHead)).toBe('heic');
    expect(sniffFormat(Buffer.from('hello world, not an image'))).toBeNull();
  });

  it('needs the PNG IEND trailer and complete HEIF boxes', async () => {
    const png = await solid('png');
    expect(hasCompleteTrailer(png, 'png')).toBe(true);
    expect(hasCompleteTrailer(png.subarray(0, png.length - 12), 'png')).toBe(false);
    const avif = await solid('avif');
    expect(isobmffComplete(avif)).toBe(true);
    expect(isobmffComplete(avif.subarray(0, avif.length - 10))).toBe(false);
  });
});

describe('stable-file check', () => {
  it('accepts a complete image with its format, size and SHA-256', async () => {
    const file = path.join(dir, 'look.jpg');
    const data = await noisyJpeg(200, 150);
    fs.writeFileSync(file, data);
    const result = await checkStableFile(file, { settleMs: 50 });
    expect(result).toMatchObject({ kind: 'ready', file: { format: 'jpeg', size: data.length } });
    const expected = (await import('node:crypto')).createHash('sha256').update(data).digest('hex');
    expect(result.kind === 'ready' && result.file.sha256).toBe(expected);
  });

  it('rejects a camera raw, TIFF inside, by its name: its small embedded preview is never sent', async () => {
    // A DNG or CR2 starts with a TIFF header, and libvips decodes its first image (a preview).
    const file = path.join(dir, 'look.DNG');
    fs.writeFileSync(file, await solid('tiff', 256, 171));
    expect(sniffFormat(fs.readFileSync(file).subarray(0, 64))).toBe('tiff');
    expect(await checkStableFile(file, { settleMs: 50 })).toMatchObject({
      kind: 'rejected',
      reason: expect.stringMatching(/^camera raw \(DNG\) is not a format Dropshoot takes/),
    });
  });

  it('rejects a half-written JPEG and a PNG cut before IEND, after retrying', async () => {
    const jpeg = await noisyJpeg(400, 300);
    fs.writeFileSync(path.join(dir, 'half.jpg'), jpeg.subarray(0, Math.floor(jpeg.length / 2)));
    const png = await solid('png', 300, 300);
    fs.writeFileSync(path.join(dir, 'cut.png'), png.subarray(0, png.length - 12));
    const started = Date.now();
    const [half, cut] = await Promise.all([
      checkStableFile(path.join(dir, 'half.jpg'), { settleMs: 50, decodeRetries: 2 }),
      checkStableFile(path.join(dir, 'cut.png'), { settleMs: 50, decodeRetries: 2 }),
    ]);
    // It never reaches its end-of-image marker (sniff.ts), before any decode.
    expect(half).toMatchObject({
      kind: 'rejected',
      reason: 'The JPEG file is incomplete (the copy may have been cut short).',
    });
    expect(cut).toMatchObject({
      kind: 'rejected',
      reason: 'The PNG file is incomplete (the copy may have been cut short).',
    });
    // 50 + 100 + 150 ms of settling: it retried before giving up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('waits for a growing file and reports one that disappears as gone', async () => {
    const file = path.join(dir, 'grow.jpg');
    const data = await noisyJpeg(600, 400);
    const fd = fs.openSync(file, 'w');
    const chunks = 8;
    const step = Math.ceil(data.length / chunks);
    const checking = checkStableFile(file, { settleMs: 120, decodeRetries: 0 });
    for (let i = 0; i < chunks; i++) {
      fs.writeSync(fd, data, i * step, Math.min(step, data.length - i * step));
      await new Promise((r) => setTimeout(r, 40));
    }
    fs.closeSync(fd);
    expect(await checking).toMatchObject({ kind: 'ready', file: { size: data.length } });

    const gone = path.join(dir, 'gone.jpg');
    fs.writeFileSync(gone, data);
    const pending = checkStableFile(gone, { settleMs: 100 });
    fs.unlinkSync(gone);
    expect(await pending).toEqual({ kind: 'gone' });
  });
});

describe('prepareUpload', () => {
  it('sends an sRGB JPEG under the limit byte for byte', async () => {
    const data = await noisyJpeg(300, 200);
    const out = await prepareUpload(data);
    expect(out).toEqual({ data, mime: 'image/jpeg', converted: [] });
  });

  it('converts TIFF to JPEG', async () => {
    const file = path.join(dir, 'scan.tif');
    fs.writeFileSync(file, await solid('tiff', 320, 240));
    const out = await prepareUpload(file);
    expect(out.mime).toBe('image/jpeg');
    expect(out.converted).toContain('TIFF converted to JPEG');
    const meta = await sharp(out.data).metadata();
    expect([meta.format, meta.width, meta.height, meta.space]).toEqual(['jpeg', 320, 240, 'srgb']);
  });

  it('converts AVIF to JPEG', async () => {
    const out = await prepareUpload(await solid('avif'));
    expect(out.mime).toBe('image/jpeg');
    expect(out.converted).toContain('AVIF converted to JPEG');
  });

  it('re-encodes a PNG over 8 MB as a JPEG under the limit', async () => {
    const png = await sharp({
      create: {
        width: 2000,
        height: 1500,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 128, sigma: 60 },
      },
    })
      .png({ compressionLevel: 1 })
      .toBuffer();
    expect(png.length).toBeGreaterThan(UPLOAD_LIMIT_BYTES);
    const out = await prepareUpload(png);
    expect(out.mime).toBe('image/jpeg');
    expect(out.data.length).toBeLessThanOrEqual(UPLOAD_LIMIT_BYTES);
    expect(out.converted.join('\n')).toMatch(/re-encoded as JPEG to fit 8\.0 MB/);
    const meta = await sharp(out.data).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 2000, 1500]);
  });

  it('steps quality, then size, down until under the limit', async () => {
    const jpeg = await noisyJpeg(1200, 900);
    const out = await prepareUpload(jpeg, { maxBytes: Math.floor(jpeg.length / 4) });
    expect(out.data.length).toBeLessThanOrEqual(Math.floor(jpeg.length / 4));
    expect(out.converted.join('\n')).toMatch(/Resized 1200×900 → \d+×\d+/);
  });

  it('normalises a Display P3 photo to sRGB', async () => {
    const p3 = await sharp({ create: { width: 64, height: 64, channels: 3, background: 'red' } })
      .withIccProfile('p3')
      .jpeg()
      .toBuffer();
    const out = await prepareUpload(p3);
    expect(out.converted).toEqual([
      expect.stringMatching(/Colour profile ".*P3.*" converted to sRGB/),
    ]);
    expect(out.mime).toBe('image/jpeg');
    const meta = await sharp(out.data).metadata();
    expect(meta.icc?.toString('latin1').replace(/\0/g, '')).toContain('sRGB');
  });

  // Real HEVC-coded HEIC files (see helpers/heic.ts), as iPhones write them.
  const garment = () =>
    sharp(
      Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="240"><rect width="100%" height="100%" fill="#ffffff"/><rect x="80" y="40" width="160" height="160" fill="#c03020"/></svg>',
      ),
    )
      .png()
      .toBuffer();
  const pixel = async (jpeg: Buffer, x: number, y: number) => {
    const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
    return [
      ...data.subarray(
        (y * info.width + x) * info.channels,
        (y * info.width + x) * info.channels + 3,
      ),
    ];
  };

  it('converts an sRGB HEIC to JPEG with its colours', async () => {
    const out = await prepareUpload(await makeHeic(await garment()));
    expect(out.mime).toBe('image/jpeg');
    expect(out.converted).toEqual(['HEIC converted to JPEG']);
    const meta = await sharp(out.data).metadata();
    expect([meta.format, meta.width, meta.height, meta.space]).toEqual(['jpeg', 320, 240, 'srgb']);
    const [r, g, b] = await pixel(out.data, 160, 120);
    expect(Math.abs(r! - 0xc0) + Math.abs(g! - 0x30) + Math.abs(b! - 0x20)).toBeLessThan(15);
    expect(await pixel(out.data, 4, 4)).toEqual([255, 255, 255]);
  });

  it('reads a Display P3 HEIC (nclx or ICC) as P3 and converts it to sRGB', async () => {
    const p3Icc = (
      await sharp(
        await sharp({ create: { width: 2, height: 2, channels: 3, background: '#000' } })
          .withIccProfile('p3')
          .png()
          .toBuffer(),
      ).metadata()
    ).icc!;
    for (const colour of [{ primaries: 12 }, { primaries: 2, icc: p3Icc }]) {
      const out = await prepareUpload(await makeHeic(await garment(), colour));
      expect(out.converted).toEqual([
        'HEIC converted to JPEG',
        expect.stringMatching(/Colour profile ".*P3.*" converted to sRGB/),
      ]);
      // P3 red is more saturated than sRGB red: in sRGB its red channel rises, green and blue fall.
      const [r, g, b] = await pixel(out.data, 160, 120);
      expect(r).toBeGreaterThan(0xc0 + 8);
      expect(g! + b!).toBeLessThan(0x30 + 0x20 - 10);
    }
  });

  it('refuses a damaged HEIC and a non-image with a clear message', async () => {
    const heic = await makeHeic(await garment());
    const damaged = Buffer.from(heic);
    damaged.fill(0, damaged.length - 600); // the coded picture is at the end
    await expect(prepareUpload(damaged)).rejects.toThrow(UnsupportedImageError);
    await expect(prepareUpload(damaged)).rejects.toThrow(/Cannot read the HEIC image/);
    await expect(prepareUpload(Buffer.from('text'))).rejects.toThrow(/Not a supported image/);
    expect(CAN_DECODE_HEIC).toBe(false); // if libvips ever decodes HEIC itself, heic.ts can go
  });
});
