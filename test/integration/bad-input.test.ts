/**
 * Hostile and broken input: malformed/oversized JSON, wrong types, unknown fields, oversized arrays,
 * path-traversal and SQL in ids, unicode text, SSRF and unreachable/slow/non-image URLs. Each gets
 * a clear 4xx JSON error, charges nothing, and the server keeps serving.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startHost, type Api, type ApiResponse } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, type Account } from './helpers/cli';
import { garmentPng } from './helpers/images';
import { catalogIds, type CatalogIds } from './helpers/tools';

const START = 200;
let srv: TestServer;
let acct: Account;
let api: Api;
let ids: CatalogIds;
let photo: string;
let knownJob: string;

beforeAll(async () => {
  srv = await startTestServer({}, 'bad-');
  acct = await createAccount(srv.dataDir, START);
  api = srv.api(acct.apiKey);
  ids = await catalogIds(api);
  photo = await api.uploadUrl(await garmentPng());
  knownJob = await api.submit({ toolId: 'remove_background', images: { user_photo: photo } });
  expect((await api.waitForJob(knownJob)).status).toBe('completed');
});
afterAll(async () => {
  await srv?.close();
});

/** Balance must be unchanged and the server must still answer normally. */
async function expectUnchargedAndAlive(a: Api, balance: number): Promise<void> {
  expect(await a.balance()).toBe(balance);
  expectSuccess(await a.get('/v1/models'), 200);
}

const rawPost = (p: string, raw: string, contentType = 'application/json'): Promise<ApiResponse> =>
  api.post(p, undefined, { raw, contentType });

describe('malformed and mistyped JSON', () => {
  const posts = ['/v1/generations', '/v1/template-sets', '/v1/catalog-jobs'];

  it.each(posts)('answers 400 JSON to malformed JSON on POST %s', async (p) => {
    const before = await api.balance();
    for (const raw of [
      '{"toolId": "virtual_model",',
      '{toolId: virtual_model}',
      "{'a':1}",
      '{"a":1}}',
      '\u0000\u0001garbage',
    ]) {
      expectError(await rawPost(p, raw), 400);
    }
    await expectUnchargedAndAlive(api, before);
  });

  it.each(posts)('answers 400 to JSON that is not an object on POST %s', async (p) => {
    for (const raw of ['[]', '"text"', '42', 'null', 'true'])
      expectError(await rawPost(p, raw), 400);
  });

  it('answers 400 to wrong field types on POST /v1/generations, charging nothing', async () => {
    const before = await api.balance();
    const bad: unknown[] = [
      { toolId: 5, images: { user_photo: photo } },
      { toolId: 'remove_background', images: 'not-an-object' },
      { toolId: 'remove_background', images: [photo] },
      { toolId: 'remove_background', images: { user_photo: 123 } },
      { toolId: 'remove_background', images: { user_photo: [photo] } },
      { toolId: 'remove_background', images: { user_photo: null } },
      {
        toolId: 'outfit_photo',
        images: { fashion_model: ids.fashionModel, garment_photos: photo },
      },
      {
        toolId: 'outfit_photo',
        images: { fashion_model: ids.fashionModel, garment_photos: [photo, 7] },
      },
      { toolId: 'ai_videos', images: { user_photo: photo }, motionPrompt: 'spin', duration: '5' },
      { toolId: 'ai_videos', images: { user_photo: photo }, motionPrompt: 'spin', duration: -1 },
      { toolId: 'ai_videos', images: { user_photo: photo }, motionPrompt: 'spin', duration: 0 },
      { toolId: 'photo_edit', images: { user_photo: photo }, customPrompt: { text: 'x' } },
      { toolId: 'pose_angle_switch', images: { user_photo: photo }, pose: 12 },
      {
        toolId: 'virtual_model',
        images: { fashion_model: ids.fashionModel, garment_photo: photo },
        ratio: 1,
      },
    ];
    for (const body of bad) {
      const res = await api.generate(body as Record<string, unknown>);
      try {
        expectError(res, 400);
      } catch (err) {
        throw new Error(`${JSON.stringify(body)} -> ${(err as Error).message}`);
      }
    }
    await expectUnchargedAndAlive(api, before);
  });

  it('answers 400 to wrong field types on template sets and catalog jobs', async () => {
    expectError(await api.post('/v1/template-sets', { label: 7, sourceMediaId: knownJob }), 400);
    expectError(await api.post('/v1/template-sets', { label: 'x', sourceMediaId: ['a'] }), 400);
    expectError(
      await api.post('/v1/catalog-jobs', {
        readyTemplateSetId: 5,
        images: { garment_photo: photo },
      }),
      400,
    );
    expectError(
      await api.post('/v1/catalog-jobs', {
        readyTemplateSetId: 'x',
        images: { garment_photo: photo },
        shotIds: 'all',
      }),
      400,
    );
  });

  it('answers 400 to unknown top-level fields', async () => {
    const before = await api.balance();
    expectError(
      await api.generate({
        toolId: 'remove_background',
        images: { user_photo: photo },
        webhookUrl: 'https://x.test',
      }),
      400,
    );
    expectError(
      await api.generate({
        toolId: 'remove_background',
        images: { user_photo: photo },
        diamonds: 0,
      }),
      400,
    );
    expectError(
      await api.post('/v1/template-sets', {
        label: 'x',
        sourceMediaId: knownJob,
        owner: 'someone-else',
      }),
      400,
    );
    expectError(
      await api.post('/v1/catalog-jobs', {
        readyTemplateSetId: 'x',
        images: { garment_photo: photo },
        priority: 'high',
      }),
      400,
    );
    await expectUnchargedAndAlive(api, before);
  });

  it.each(posts)(
    'answers 400 (not 500) to JSON nested 10,000 levels deep on POST %s',
    async (p) => {
      const before = await api.balance();
      const deep = '['.repeat(10_000) + ']'.repeat(10_000);
      for (const raw of [
        deep,
        `{"toolId":${deep}}`,
        `{"label":"x","images":{"a":${'{"b":'.repeat(5000)}1${'}'.repeat(5000)}}}`,
      ]) {
        expectError(await rawPost(p, raw), 400, 'nested');
      }
      // Brackets inside strings are text, not depth.
      expectError(
        await rawPost(p, JSON.stringify({ unknownField: '['.repeat(10_000) })),
        400,
        'unknown',
      );
      await expectUnchargedAndAlive(api, before);
    },
  );

  it('answers 413 to a JSON body over 1 MiB and keeps serving', async () => {
    const before = await api.balance();
    const huge = {
      toolId: 'photo_edit',
      images: { user_photo: photo },
      customPrompt: 'x'.repeat(1024 * 1024 + 10),
    };
    expectError(await api.generate(huge), 413);
    await expectUnchargedAndAlive(api, before);
  });

  it('answers 400 to more than 10 images in an array but accepts exactly 10', async () => {
    const before = await api.balance();
    const eleven = Array.from({ length: 11 }, () => photo);
    expectError(
      await api.generate({
        toolId: 'outfit_photo',
        images: { fashion_model: ids.fashionModel, garment_photos: eleven },
      }),
      400,
    );
    expectError(
      await api.generate({
        toolId: 'jewelry_on_model',
        images: { jewelry_images: eleven },
        jewelryType: 'ring',
      }),
      400,
    );
    await expectUnchargedAndAlive(api, before);
    const ten = await api.generate({
      toolId: 'outfit_photo',
      images: { fashion_model: ids.fashionModel, garment_photos: eleven.slice(0, 10) },
    });
    expectSuccess(ten, 202);
    expect((await api.waitForJob(ten.body.id as string)).status).toBe('completed');
  });
});

describe('hostile ids', () => {
  const nasty = [
    '../x',
    '..%2F..%2Fcore.db',
    '1;DROP TABLE jobs',
    "' OR '1'='1",
    '%00',
    'a'.repeat(600),
    '..\\..\\windows',
    '%2e%2e%2f',
  ];

  it('answers 404 or 400 JSON (never 500) for hostile ids in every path parameter', async () => {
    for (const raw of nasty) {
      const seg = raw.includes('%') ? raw : encodeURIComponent(raw);
      for (const call of [
        () => api.get(`/v1/generations/${seg}`),
        () => api.delete(`/v1/template-sets/${seg}`),
        () => api.get(`/v1/ready-template-sets/${seg}`),
      ]) {
        const res = await call();
        try {
          expectError(res, [400, 404]);
        } catch (err) {
          throw new Error(`id ${JSON.stringify(raw)}: ${(err as Error).message}`);
        }
      }
    }
  });

  it('answers an id over 8 KiB with 414 in the {success:false,error} shape, after authentication', async () => {
    const long = 'a'.repeat(9000);
    for (const res of [
      await api.get(`/v1/generations/${long}`),
      await api.delete(`/v1/template-sets/${long}`),
      await api.get(`/v1/ready-template-sets/${long}`),
    ]) {
      expectError(res, 414, 'too long');
      expect(Object.keys(res.body).sort()).toEqual(['error', 'success']);
    }
    expectError(await api.withAuth(null).get(`/v1/generations/${long}`), 401);
  });

  it('answers a URL larger than the header limit with 431 in the {success:false,error} shape', async () => {
    const res = await api.get(`/v1/generations/${'a'.repeat(20_000)}`);
    expectError(res, 431);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'success']);
    expectSuccess(await api.get('/v1/models'), 200);
  });

  it('answers 404 or 400 for literal traversal paths too', async () => {
    for (const p of [
      '/v1/generations/../account',
      '/v1/generations/..%2f..%2fetc%2fpasswd',
      '/v1/template-sets/%2e%2e',
    ]) {
      const res = await api.get(p);
      expect(res.status).toBeLessThan(500);
    }
  });

  it('answers 4xx for hostile ids in JSON bodies, charging nothing', async () => {
    const before = await api.balance();
    for (const raw of nasty) {
      expectError(
        await api.generate({ templateSetId: raw, images: { garment_photo: photo } }),
        [400, 404],
      );
      expectError(
        await api.post('/v1/template-sets', { label: 'x', sourceMediaId: raw }),
        [400, 404],
      );
      expectError(
        await api.post('/v1/catalog-jobs', {
          readyTemplateSetId: raw,
          images: { garment_photo: photo },
        }),
        [400, 404],
      );
    }
    await expectUnchargedAndAlive(api, before);
  });

  it('still has its data afterwards (no table was dropped, no file escaped)', async () => {
    const job = await api.get(`/v1/generations/${knownJob}`);
    expectSuccess(job, 200);
    expect(job.body.status).toBe('completed');
    const id = await api.submit({
      toolId: 'photo_reframe',
      images: { user_photo: photo },
      targetRatio: '3:4',
    });
    expect((await api.waitForJob(id)).status).toBe('completed');
  });
});

describe('unicode text', () => {
  it('accepts unicode customPrompt on photo_edit and completes', async () => {
    const id = await api.submit({
      toolId: 'photo_edit',
      images: { user_photo: photo },
      customPrompt: 'make the background light grey ☁️✨ (très clair 浅灰色)',
    });
    expect((await api.waitForJob(id)).status).toBe('completed');
  });

  it('answers an instruction the offline editor cannot read (other scripts) with a failed, refunded job, not a 500', async () => {
    const id = await api.submit({
      toolId: 'photo_edit',
      images: { user_photo: photo },
      customPrompt: 'Färbe das Hemd 🌊 blau — 把衬衫变成蓝色 — اجعل القميص أزرق',
    });
    const job = await api.waitForJob(id);
    expect(job.status).toBe('failed');
    expect(job.errorMessage).toContain('把衬衫变成蓝色');
  });

  it('accepts a unicode motionPrompt on ai_videos', async () => {
    const id = await api.submit({
      toolId: 'ai_videos',
      images: { user_photo: photo },
      motionPrompt: 'rotation lente ↻ 360° 🎥',
      duration: 2,
    });
    expect((await api.waitForJob(id)).status).toBe('completed');
  });
});

describe('image URLs without allowPrivateUrls (SSRF protection)', () => {
  it('refuses private, loopback and link-local URLs and non-http schemes with 400, charging nothing', async () => {
    const host = await startHost((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      void garmentPng().then((b) => res.end(b));
    });
    try {
      const before = await api.balance();
      const urls = [
        `${host.url}/real.png`, // a live loopback server that really serves a PNG
        'http://127.0.0.1:1/nope.png',
        'http://10.0.0.1/a.png',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/a.png',
        'http://localhost/a.png',
        'http://192.168.1.1/a.png',
        'http://0.0.0.0/a.png',
        'file:///etc/passwd',
        'ftp://example.com/a.png',
        'not a url',
      ];
      for (const u of urls) {
        const res = await api.generate({ toolId: 'remove_background', images: { user_photo: u } });
        try {
          expectError(res, 400);
        } catch (err) {
          throw new Error(`${u}: ${(err as Error).message}`);
        }
      }
      expectError(
        await api.generate({
          toolId: 'virtual_model',
          images: { fashion_model: 'http://10.1.2.3/m.png', garment_photo: photo },
        }),
        400,
      );
      await expectUnchargedAndAlive(api, before);
    } finally {
      await host.close();
    }
  });
});

describe('image URLs with allowPrivateUrls', () => {
  let priv: TestServer;
  let papi: Api;
  let host: { url: string; close(): Promise<void> };
  const hanging = new Set<http.ServerResponse>();

  beforeAll(async () => {
    priv = await startTestServer({ allowPrivateUrls: true }, 'bad-priv-');
    const a = await createAccount(priv.dataDir, 50);
    papi = priv.api(a.apiKey);
    const png = await garmentPng(160, 200, '#884400');
    host = await startHost((req, res) => {
      if (req.url === '/shirt.png') {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(png.length) });
        res.end(png);
      } else if (req.url === '/page.html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>not an image</body></html>');
      } else if (req.url === '/lying.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end('definitely not png bytes');
      } else if (req.url === '/slow.png') {
        hanging.add(res); // never answers
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
    });
  });
  afterAll(async () => {
    for (const r of hanging) r.destroy();
    await host?.close();
    await priv?.close();
  });

  it('resolves a URL on a local HTTP server serving a real PNG and completes the job', async () => {
    const before = await papi.balance();
    const id = await papi.submit({
      toolId: 'remove_background',
      images: { user_photo: `${host.url}/shirt.png` },
    });
    expect(await papi.balance()).toBe(before - 1);
    const job = await papi.waitForJob(id);
    expect(job.status).toBe('completed');
    expect(job.resultUrls).toHaveLength(1);
  });

  it('refuses an unreachable URL, a 404 URL and a non-image URL with 400 before charging', async () => {
    const before = await papi.balance();
    for (const u of [
      'http://127.0.0.1:1/nope.png',
      `${host.url}/missing.png`,
      `${host.url}/page.html`,
      `${host.url}/lying.png`,
    ]) {
      const res = await papi.generate({ toolId: 'remove_background', images: { user_photo: u } });
      try {
        expectError(res, 400);
      } catch (err) {
        throw new Error(`${u}: ${(err as Error).message}`);
      }
    }
    // The same for a fashion_model given as a URL and for catalog jobs.
    expectError(
      await papi.generate({
        toolId: 'model_swap',
        images: { user_photo: `${host.url}/shirt.png`, fashion_model: `${host.url}/missing.png` },
      }),
      400,
    );
    await expectUnchargedAndAlive(papi, before);
  });

  it('gives 400 within a bounded time for a URL whose server never answers, and keeps serving meanwhile', async () => {
    const before = await papi.balance();
    const t0 = Date.now();
    const pending = papi.generate({
      toolId: 'remove_background',
      images: { user_photo: `${host.url}/slow.png` },
    });
    // While one request waits on the dead URL, others are still served.
    expectSuccess(await papi.get('/v1/account'), 200);
    const res = await pending;
    const elapsed = Date.now() - t0;
    expectError(res, 400);
    expect(elapsed).toBeLessThan(30_000);
    await expectUnchargedAndAlive(papi, before);
  }, 40_000);
});
