/**
 * Issue 10 items 3 and 13 against a /v1 stand-in written from the spec: results on another host
 * served as `application/octet-stream` are typed by their bytes all the way to the export, a body
 * that is no image or video is a clear error, and uploads carry their sniffed type.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, HttpClient, UnrecognizedMediaError } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import * as store from '../../src/studio/db/store';
import type { Recipe } from '../../src/shared/studio';
import { startStandIn, type StandInOptions } from './client-stand-in';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-client-media-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function standIn(options: StandInOptions = {}) {
  const service = await startStandIn(options);
  cleanups.push(() => service.close());
  return {
    service,
    client: new HttpClient({ baseUrl: service.url, apiKey: service.apiKey, timeoutMs: 10_000 }),
  };
}

const photo = (hue: number) =>
  sharp({
    create: { width: 480, height: 640, channels: 3, background: { r: 240, g: 240, b: 236 } },
  })
    .composite([
      {
        input: Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="400"><rect width="240" height="400" rx="30" fill="hsl(${hue},70%,45%)"/></svg>`,
        ),
        top: 120,
        left: 120,
      },
    ])
    .jpeg({ quality: 88 });

describe('results typed by their bytes (item 3)', () => {
  it.each(['image', 'png', 'webp'] as const)(
    'a %s result served as application/octet-stream from another host is typed by signature',
    async (resultBody) => {
      const { service, client } = await standIn({ resultBody });
      const uploaded = await client.upload(await photo(10).toBuffer());
      const { id } = await client.createGeneration({
        toolId: 'remove_background',
        images: { user_photo: uploaded.url },
      });
      const job = await client.getGeneration(id);
      const url = job.resultUrls[0]!;
      expect(new URL(url).host).not.toBe(new URL(service.url).host);
      const download = await client.download(url);
      expect(download.servedAs).toBe('application/octet-stream');
      const format = (await sharp(download.data).metadata()).format;
      const expected = {
        image: ['image/jpeg', 'jpg', 'jpeg'],
        png: ['image/png', 'png', 'png'],
        webp: ['image/webp', 'webp', 'webp'],
      }[resultBody];
      expect([download.mime, download.ext, format]).toEqual(expected);
      expect(download.kind).toBe('image');
    },
  );

  it('a result that is an HTML page is an UnrecognizedMediaError naming the URL, what it is and how it was served', async () => {
    const { client } = await standIn({ resultBody: 'html' });
    const uploaded = await client.upload(await photo(10).toBuffer());
    const { id } = await client.createGeneration({
      toolId: 'remove_background',
      images: { user_photo: uploaded.url },
    });
    const url = (await client.getGeneration(id)).resultUrls[0]!;
    const failure = await client.download(url).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(UnrecognizedMediaError);
    expect((failure as Error).message).toContain(
      `the file at ${url} is not an image or video we can use: it is an HTML page`,
    );
    expect((failure as Error).message).toContain('served as application/octet-stream');
  });

  it('a headless run stores octet-stream results as images with thumbnails, renders the export and checks compliance', async () => {
    const { service, client } = await standIn();
    const root = tempDir();
    const inDir = path.join(root, 'in');
    fs.mkdirSync(inDir);
    await photo(20).toFile(path.join(inDir, 'a.jpg'));
    await photo(200).toFile(path.join(inDir, 'b.jpg'));
    const recipe: Recipe = {
      request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
      export: { preset: 'shopify', format: 'jpeg', quality: 90, naming: '{name}-{tool}-{n}' },
    };
    const engine = new StudioEngine({ dataDir: path.join(root, 'studio'), client, concurrency: 2 });
    try {
      const summary = await runBatch(engine, { inDir, recipe, outDir: path.join(root, 'out') });
      expect(summary).toMatchObject({ photos: 2, exported: 2, failed: [] });
      expect(service.downloads).toHaveLength(2);
      const results = store
        .listItems(engine.db, { limit: 10, offset: 0 })
        .items.flatMap((i) => store.resultsOf(engine.db, i.id));
      expect(results).toHaveLength(2);
      for (const result of results) {
        expect(result.mime).toBe('image/jpeg');
        expect(result.file).toMatch(/\.jpg$/);
        expect(result.thumb).not.toBeNull();
        expect((await sharp(engine.library.absolute(result.thumb!)).metadata()).format).toBe(
          'webp',
        );
        expect(result.exportedPath).toMatch(/\.jpg$/);
        // Rendered for the preset (Shopify: 2048 px square canvas), not copied as it came.
        expect(await sharp(result.exportedPath!).metadata()).toMatchObject({
          format: 'jpeg',
          width: 2048,
          height: 2048,
        });
        const report = store.resultView(result).compliance!;
        expect(report.checks.map((c) => c.id)).toEqual(
          expect.arrayContaining(['format', 'size', 'colour-space', 'icc-profile']),
        );
        expect(report.checks.find((c) => c.id === 'size')).toMatchObject({
          ok: true,
          value: '2048x2048',
        });
      }
    } finally {
      await engine.close();
    }
  });
});

describe('uploads carry their sniffed type (item 13)', () => {
  it('sends image/jpeg, image/png and image/webp as the Content-Type, from the bytes', async () => {
    const { service, client } = await standIn();
    await client.upload(await photo(1).jpeg().toBuffer());
    await client.upload(await photo(2).png().toBuffer());
    await client.upload(await photo(3).webp().toBuffer());
    expect(service.log.filter((r) => r.path === '/v1/uploads').map((r) => r.contentType)).toEqual([
      'image/jpeg',
      'image/png',
      'image/webp',
    ]);
  });

  it('refuses bytes that are no JPEG, PNG or WebP with a 415 before spending a request', async () => {
    const { service, client } = await standIn();
    const failure = await client
      .upload(await photo(4).tiff().toBuffer())
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({
      status: 415,
      message: expect.stringMatching(/not a JPEG, PNG or WebP/),
    });
    expect(service.count('POST', '/v1/uploads')).toBe(0);
  });
});
