/**
 * Pixel bombs (small files declaring a huge canvas) are refused from their header with a clear
 * 400 before anything decodes them or charges for them: as uploads, and as image URLs on every
 * tool, catalog jobs and template sets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startHost, type Api } from './helpers/api';
import { bombJpeg, bombPng, bombWebp } from './helpers/bombs';
import { createAccount } from './helpers/cli';
import { garmentPng } from './helpers/images';
import { startTestServer, type TestServer } from './helpers/server';
import { catalogIds, requestFor, TOOLS, type CatalogIds } from './helpers/tools';

let srv: TestServer;
let api: Api;
let host: { url: string; close(): Promise<void> };
let ids: CatalogIds;
let photo: string;
const bombs: Record<string, Buffer> = {};

beforeAll(async () => {
  bombs['png'] = bombPng(16000, 16000);
  bombs['jpg'] = await bombJpeg(60000, 60000);
  bombs['webp'] = await bombWebp(16000, 16000);
  host = await startHost((req, res) => {
    const body = bombs[(req.url ?? '').replace('/bomb.', '')];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(body.length) });
    res.end(body);
  });
  srv = await startTestServer({ allowPrivateUrls: true }, 'pixels-');
  api = srv.api((await createAccount(srv.dataDir, 500)).apiKey);
  ids = await catalogIds(api);
  photo = await api.uploadUrl(await garmentPng());
});
afterAll(async () => {
  await host?.close();
  await srv?.close();
});

describe('uploads', () => {
  it.each([
    ['png', '16000x16000', 'image/png'],
    ['jpg', '60000x60000', 'image/jpeg'],
    ['webp', '16000x16000', 'image/webp'],
  ])(
    'refuses a %s declaring %s with 400 naming the size and the limit',
    async (kind, size, mime) => {
      expect(bombs[kind]!.length).toBeLessThan(1024 * 1024);
      expectError(await api.upload(bombs[kind]!, mime), 400, size, 'megapixels');
    },
  );

  it('accepts a photo header of 24 megapixels', async () => {
    expectSuccess(await api.upload(await bombJpeg(6000, 4000), 'image/jpeg'), 200);
  });
});

describe('image URLs', () => {
  it.each(TOOLS)('refuses a bomb URL on %s with 400 before any charge', async (tool) => {
    const before = await api.balance();
    const res = await api.generate(requestFor(tool, `${host.url}/bomb.png`, ids, photo));
    expectError(res, 400, '16000x16000');
    expect(await api.balance()).toBe(before);
  });

  it('refuses a bomb as a direct fashion_model or venue URL, a catalog job product and a template-set image', async () => {
    const before = await api.balance();
    expectError(
      await api.generate({
        toolId: 'virtual_model',
        images: { fashion_model: `${host.url}/bomb.webp`, garment_photo: photo },
      }),
      400,
      'megapixels',
    );
    expectError(
      await api.generate({
        toolId: 'virtual_model',
        images: {
          fashion_model: ids.fashionModel,
          venue: `${host.url}/bomb.jpg`,
          garment_photo: photo,
        },
      }),
      400,
      'megapixels',
    );
    const sets = await api.get('/v1/ready-template-sets?limit=1');
    const set = (sets.body.templateSets as { id: string }[])[0]!;
    expectError(
      await api.post('/v1/catalog-jobs', {
        readyTemplateSetId: set.id,
        images: { garment_photo: `${host.url}/bomb.png` },
      }),
      400,
      'megapixels',
    );
    expectError(
      await api.post('/v1/template-sets', {
        label: 'bomb',
        toolId: 'virtual_model',
        images: { fashion_model: `${host.url}/bomb.png` },
      }),
      400,
      'megapixels',
    );
    expect(await api.balance()).toBe(before);
  });
});
