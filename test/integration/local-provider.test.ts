/**
 * The local provider's image operations on real images: the catalog it composes with, the
 * upscale, the reframe, the retouch, the packs and the video.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import type { Region } from 'sharp';
import { sharp } from '../../src/infra/sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/core/catalog';
import { createLocalProvider } from '../../src/core/providers/local';
import { enhancePhoto } from '../../src/core/providers/local/enhance';
import { reframePhoto } from '../../src/core/providers/local/reframe';
import { retouchPhoto } from '../../src/core/providers/local/retouch';
import { motionFrom, renderVideo } from '../../src/core/providers/local/video';
import type { ProviderJob } from '../../src/core/providers/types';

const catalog = loadCatalog();

async function product(background = '#f3f3f1', width = 600, height = 800): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="${background}"/><rect x="${width * 0.3}" y="${height * 0.25}" width="${width * 0.4}" height="${height * 0.5}" rx="30" fill="#1f6feb"/><circle cx="${width / 2}" cy="${height / 2}" r="${width / 10}" fill="#ffd33d"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 92 }).toBuffer();
}

// stats() reads the input, not the pipeline: extract to a buffer first.
const meanOf = async (img: Buffer, region?: Region) => {
  const part = region ? await sharp(img).extract(region).png().toBuffer() : img;
  return (await sharp(part).stats()).channels.slice(0, 3).map((c) => c.mean);
};

describe('catalog', () => {
  it('ships 24+ models of both genders, 24+ venues, 24 default poses, 4 per jewelry type and 3 ready sets', () => {
    expect(catalog.fashionModels.length).toBeGreaterThanOrEqual(24);
    expect(new Set(catalog.fashionModels.map((m) => m.gender))).toEqual(
      new Set(['male', 'female']),
    );
    expect(catalog.venues.length).toBeGreaterThanOrEqual(24);
    expect(catalog.poses.filter((p) => p.type === 'default').length).toBeGreaterThanOrEqual(24);
    for (const type of ['ring', 'necklace', 'earring', 'bracelet'])
      expect(catalog.poses.filter((p) => p.type === type)).toHaveLength(4);
    expect(catalog.readySets.filter((s) => s.shots.length >= 3).length).toBeGreaterThanOrEqual(3);
    for (const file of [...catalog.fashionModels, ...catalog.venues].map((e) => e.file))
      expect(fs.existsSync(catalog.filePath(file))).toBe(true);
  });
});

describe('photo_enhance', () => {
  it('doubles the size and is sharper than a plain resize', async () => {
    const input = await product();
    const out = await enhancePhoto(input);
    expect(await sharp(out).metadata()).toMatchObject({
      width: 1200,
      height: 1600,
      format: 'jpeg',
    });
    const plain = await sharp(input).resize(1200, 1600).jpeg({ quality: 92 }).toBuffer();
    expect((await sharp(out).stats()).sharpness).toBeGreaterThan(
      (await sharp(plain).stats()).sharpness,
    );
  });
});

describe('photo_reframe', () => {
  it('hits the exact target ratio, extending with the photo’s own background, not bars', async () => {
    const input = await product('#e8dccb', 600, 600);
    const out = await reframePhoto(input, '16:9');
    const { width, height } = await sharp(out).metadata();
    expect(Math.abs(width! / height! - 16 / 9)).toBeLessThan(2 / height!);
    const source = await meanOf(input, { left: 0, top: 0, width: 40, height: 600 });
    const fill = await meanOf(out, {
      left: 0,
      top: 0,
      width: Math.round(width! * 0.1),
      height: height!,
    });
    expect(fill.reduce((sum, v, c) => sum + Math.abs(v - source[c]!), 0)).toBeLessThan(8);
  });

  it('crops around the subject when a crop of the ratio holds it whole', async () => {
    const out = await reframePhoto(await product('#ffffff', 1200, 800), '1:1');
    const { width, height } = await sharp(out).metadata();
    expect(width).toBe(height);
    expect(width).toBeLessThanOrEqual(800);
  });
});

describe('amateur_to_pro', () => {
  it('neutralises a colour cast on the backdrop', async () => {
    const input = await product('#c8d2ea');
    const before = await meanOf(input, { left: 0, top: 0, width: 60, height: 60 });
    const after = await meanOf(await retouchPhoto(input), {
      left: 0,
      top: 0,
      width: 60,
      height: 60,
    });
    const cast = (c: number[]) => Math.max(...c) - Math.min(...c);
    expect(cast(after)).toBeLessThan(cast(before) / 3);
  });
});

describe('generative tools', () => {
  const provider = createLocalProvider({ catalog });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-provider-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const job = (over: Partial<ProviderJob>): ProviderJob => ({
    jobId: 'job_test',
    toolId: 'virtual_model',
    images: {},
    fashionModel: null,
    venue: null,
    pose: null,
    params: {},
    outputs: 1,
    ...over,
  });

  it('renders virtual_model at the requested ratio with the garment colour on the model', async () => {
    const photo = path.join(dir, 'p.jpg');
    fs.writeFileSync(photo, await product());
    const model = catalog.fashionModels[0]!;
    const venue = catalog.venues[8]!;
    const [out] = await provider.run(
      job({
        images: { garment_photo: [{ path: photo, mime: 'image/jpeg' }] },
        fashionModel: {
          id: model.id,
          image: { path: catalog.filePath(model.file), mime: 'image/png' },
        },
        venue: { id: venue.id, image: { path: catalog.filePath(venue.file), mime: 'image/jpeg' } },
        params: { ratio: '4:5' },
      }),
      { signal: new AbortController().signal },
    );
    const meta = await sharp(out!.data).metadata();
    expect(meta.width! / meta.height!).toBeCloseTo(0.8, 2);
    const { data } = await sharp(out!.data).raw().toBuffer({ resolveWithObject: true });
    let blue = 0;
    for (let i = 0; i < data.length; i += 3) if (data[i + 2]! > 180 && data[i]! < 80) blue++;
    expect(blue).toBeGreaterThan(1000);
  });

  it('gives a pack of four distinct shots', async () => {
    const photo = path.join(dir, 'p2.jpg');
    fs.writeFileSync(photo, await product());
    const outs = await provider.run(
      job({
        toolId: 'clothing_ecom_pack',
        images: { user_photo: [{ path: photo, mime: 'image/jpeg' }] },
        outputs: 4,
      }),
      { signal: new AbortController().signal },
    );
    expect(outs).toHaveLength(4);
    const thumbs = await Promise.all(
      outs.map((o) => sharp(o.data).resize(32, 32, { fit: 'fill' }).raw().toBuffer()),
    );
    for (let a = 0; a < 4; a++) {
      for (let b = a + 1; b < 4; b++) {
        let diff = 0;
        for (let i = 0; i < thumbs[a]!.length; i++)
          diff += Math.abs(thumbs[a]![i]! - thumbs[b]![i]!);
        expect(diff / thumbs[a]!.length).toBeGreaterThan(5);
      }
    }
  });
});

describe('ai_videos', () => {
  it('reads camera motion from the prompt', () => {
    expect(motionFrom('slow zoom out from the jacket')).toBe('zoom_out');
    expect(motionFrom('camera pans left across the dress')).toBe('pan_left');
    expect(motionFrom('orbit around the shoe')).toBe('orbit');
    expect(motionFrom('gentle movement')).toBe('zoom_in');
  });

  it('renders an H.264 MP4 of the requested duration', async () => {
    const mp4 = await renderVideo(await product(), {
      motionPrompt: 'pan right',
      duration: 2,
      ratio: '1:1',
    });
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const file = path.join(os.tmpdir(), `dropshoot-video-${process.pid}.mp4`);
    fs.writeFileSync(file, mp4);
    const probe = spawnSync(ffmpeg.path, ['-hide_banner', '-i', file], { encoding: 'utf8' });
    fs.rmSync(file);
    expect(probe.stderr).toMatch(/Video: h264/);
    const [, hh, mm, ss] = /Duration: (\d+):(\d+):([\d.]+)/.exec(probe.stderr) ?? [];
    expect(Number(hh) * 3600 + Number(mm) * 60 + Number(ss)).toBeCloseTo(2, 0);
  });
});
