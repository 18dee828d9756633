/**
 * Result and upload typing by signature: real files made with sharp (stills) and ffmpeg
 * (videos), never a Content-Type or a file name.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { judgeMedia, sniffMedia, sniffUploadMime, UnrecognizedMediaError } from '../../src/client';

const still = () =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 40, b: 90 } } });

async function video(ext: 'mp4' | 'mov' | 'webm'): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-media-'));
  const out = path.join(dir, `clip.${ext}`);
  const codec = ext === 'webm' ? ['-c:v', 'libvpx'] : ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'];
  await promisify(execFile)(ffmpeg.path, [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'color=c=red:s=64x64:d=0.2',
    ...codec,
    '-y',
    out,
  ]);
  try {
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('sniffMedia', () => {
  it('types real stills by their bytes: JPEG, PNG, WebP, GIF, AVIF', async () => {
    expect(sniffMedia(await still().jpeg().toBuffer())).toEqual({
      mime: 'image/jpeg',
      ext: 'jpg',
      kind: 'image',
    });
    expect(sniffMedia(await still().png().toBuffer())).toEqual({
      mime: 'image/png',
      ext: 'png',
      kind: 'image',
    });
    expect(sniffMedia(await still().webp().toBuffer())).toEqual({
      mime: 'image/webp',
      ext: 'webp',
      kind: 'image',
    });
    expect(sniffMedia(await still().gif().toBuffer())).toEqual({
      mime: 'image/gif',
      ext: 'gif',
      kind: 'image',
    });
    expect(sniffMedia(await still().avif().toBuffer())).toEqual({
      mime: 'image/avif',
      ext: 'avif',
      kind: 'image',
    });
  });

  it('types real videos by their bytes: MP4, MOV, WebM', async () => {
    expect(sniffMedia(await video('mp4'))).toEqual({
      mime: 'video/mp4',
      ext: 'mp4',
      kind: 'video',
    });
    expect(sniffMedia(await video('mov'))).toEqual({
      mime: 'video/quicktime',
      ext: 'mov',
      kind: 'video',
    });
    expect(sniffMedia(await video('webm'))).toEqual({
      mime: 'video/webm',
      ext: 'webm',
      kind: 'video',
    });
  });

  it('knows nothing of HTML error pages, JSON, TIFF, empty or truncated bodies', async () => {
    expect(sniffMedia(Buffer.from('<!DOCTYPE html><title>403</title>'))).toBeNull();
    expect(sniffMedia(Buffer.from('{"error":"expired"}'))).toBeNull();
    expect(sniffMedia(await still().tiff().toBuffer())).toBeNull();
    expect(sniffMedia(Buffer.alloc(0))).toBeNull();
    expect(sniffMedia(Buffer.from([0xff, 0xd8]))).toBeNull();
  });

  it('admits only JPEG, PNG and WebP as uploads', async () => {
    expect(sniffUploadMime(await still().jpeg().toBuffer())).toBe('image/jpeg');
    expect(sniffUploadMime(await still().png().toBuffer())).toBe('image/png');
    expect(sniffUploadMime(await still().webp().toBuffer())).toBe('image/webp');
    expect(sniffUploadMime(await still().gif().toBuffer())).toBeNull();
    expect(sniffUploadMime(await video('mp4'))).toBeNull();
  });
});

describe('judgeMedia', () => {
  it('says what the bytes look like, where they came from and how they were served', () => {
    const page = Buffer.from('<!DOCTYPE html><html><body>AccessDenied</body></html>');
    let error: unknown;
    try {
      judgeMedia(page, {
        what: 'the file at https://cdn.example/r/1',
        servedAs: 'application/octet-stream',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(UnrecognizedMediaError);
    expect((error as Error).message).toBe(
      `the file at https://cdn.example/r/1 is not an image or video we can use: it is an HTML page (${page.length} bytes, served as application/octet-stream); expected JPEG, PNG, WebP, GIF, AVIF, MP4, MOV or WebM`,
    );
  });

  it('names unknown bytes by their first bytes and refuses an empty body', () => {
    expect(() =>
      judgeMedia(Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]), { what: 'x', servedAs: null }),
    ).toThrow('unknown bytes (01 02 03 04 05 06 07 08…)');
    expect(() => judgeMedia(Buffer.alloc(0), { what: 'x', servedAs: 'image/jpeg' })).toThrow(
      'it is an empty body (0 bytes, served as image/jpeg)',
    );
  });
});
