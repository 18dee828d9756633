/**
 * Image dimensions from the header alone, checked against sharp-made files of every accepted
 * format and against crafted headers that declare a huge canvas (pixel bombs).
 */
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  assertPixelLimit,
  imageDimensions,
  MAX_INPUT_PIXELS,
} from '../../src/core/media/image-header';
import { BadRequest } from '../../src/core/errors';
import { bombJpeg, bombPng, bombWebp } from '../integration/helpers/bombs';

const canvas = (width: number, height: number, alpha = false) =>
  sharp({
    create: {
      width,
      height,
      channels: alpha ? 4 : 3,
      background: { r: 200, g: 30, b: 30, alpha: 0.5 },
    },
  });

describe('imageDimensions', () => {
  it.each([
    ['PNG', () => canvas(321, 123).png().toBuffer()],
    ['PNG with alpha', () => canvas(321, 123, true).png().toBuffer()],
    ['baseline JPEG', () => canvas(321, 123).jpeg().toBuffer()],
    ['progressive JPEG', () => canvas(321, 123).jpeg({ progressive: true }).toBuffer()],
    [
      'JPEG with EXIF and ICC before the frame',
      () =>
        canvas(321, 123)
          .withMetadata({ exif: { IFD0: { Copyright: 'x'.repeat(3000) } } })
          .jpeg()
          .toBuffer(),
    ],
    ['lossy WebP (VP8)', () => canvas(321, 123).webp({ quality: 80 }).toBuffer()],
    ['lossless WebP (VP8L)', () => canvas(321, 123).webp({ lossless: true }).toBuffer()],
    ['WebP with alpha (VP8X)', () => canvas(321, 123, true).webp({ quality: 80 }).toBuffer()],
  ])('reads %s dimensions exactly', async (_name, make) => {
    const data = await make();
    expect(imageDimensions(data)).toEqual({ width: 321, height: 123 });
  });

  it('reads the declared size of crafted bombs', async () => {
    expect(imageDimensions(bombPng(16000, 16000))).toEqual({ width: 16000, height: 16000 });
    expect(imageDimensions(await bombJpeg(60000, 60000))).toEqual({ width: 60000, height: 60000 });
    expect(imageDimensions(await bombWebp(16000, 16000))).toEqual({ width: 16000, height: 16000 });
  });

  it('gives null for a header it cannot read instead of guessing', () => {
    expect(imageDimensions(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).toBeNull();
    expect(imageDimensions(Buffer.from('not an image at all, really'))).toBeNull();
    const truncated = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      deflateSync(Buffer.alloc(10)),
    ]);
    expect(imageDimensions(truncated)).toBeNull();
  });
});

describe('assertPixelLimit', () => {
  it('refuses more pixels than the limit with a 400 that names the size', () => {
    let thrown: unknown;
    try {
      assertPixelLimit(bombPng(16000, 16000), 'The upload');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(BadRequest);
    expect((thrown as BadRequest).status).toBe(400);
    expect((thrown as BadRequest).message).toContain('16000x16000');
  });

  it('accepts an image at exactly the limit and a normal photo', async () => {
    const side = Math.sqrt(MAX_INPUT_PIXELS);
    expect(() => assertPixelLimit(bombPng(side, side), 'x')).not.toThrow();
    expect(() => assertPixelLimit(bombPng(side + 1, side), 'x')).toThrow(BadRequest);
    expect(() => assertPixelLimit(Buffer.from('unreadable'), 'x')).not.toThrow();
  });
});
