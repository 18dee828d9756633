/**
 * Template sets (spec 2.6, 2.7, 4.6 rule 2, 4.8): saving from a completed job or directly,
 * listing, deleting, validation errors, and generating from a template (fields override).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, expectError, expectSuccess, type Api, type Json } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, type Account } from './helpers/cli';
import { garmentPng, imageSize, isImage } from './helpers/images';
import { delayedProvider } from './helpers/providers';
import { catalogIds, PRICES, type CatalogIds } from './helpers/tools';

let srv: TestServer;
let acct: Account;
let api: Api;
let ids: CatalogIds;
let photo: string;
let sourceJob: string;

beforeAll(async () => {
  srv = await startTestServer({}, 'tpl-');
  acct = await createAccount(srv.dataDir, 500);
  api = srv.api(acct.apiKey);
  ids = await catalogIds(api);
  photo = await api.uploadUrl(await garmentPng());
  sourceJob = await api.submit({
    toolId: 'virtual_model',
    images: { fashion_model: ids.fashionModel, venue: ids.venue, garment_photo: photo },
    pose: ids.pose,
    ratio: '4:5',
  });
  expect((await api.waitForJob(sourceJob)).status).toBe('completed');
});
afterAll(async () => {
  await srv?.close();
});

async function listSets(a: Api = api): Promise<Json[]> {
  const res = await a.get('/v1/template-sets');
  expectSuccess(res, 200);
  expect(Array.isArray(res.body.templateSets)).toBe(true);
  return res.body.templateSets as Json[];
}

async function aspectOf(jobId: string): Promise<number> {
  const job = await api.waitForJob(jobId);
  expect(job.status, String(job.errorMessage)).toBe('completed');
  const img = await download((job.resultUrls as string[])[0]!, acct.apiKey);
  const { width, height } = await imageSize(img.bytes);
  return width / height;
}

describe('creating and listing', () => {
  it('saves a completed virtual_model job (sourceMediaId) and lists its styling with a cover image', async () => {
    const res = await api.post('/v1/template-sets', {
      label: 'Summer studio',
      sourceMediaId: sourceJob,
    });
    expectSuccess(res, 201);
    expect(typeof res.body.id).toBe('string');
    const entry = (await listSets()).find((t) => t.id === res.body.id);
    expect(entry).toBeDefined();
    expect(entry!.label).toBe('Summer studio');
    expect(entry!.toolId).toBe('virtual_model');
    expect(entry!.pose).toBe(ids.pose);
    const images = entry!.images as Json;
    expect(typeof images).toBe('object');
    expect(images.fashion_model).toMatch(/^https?:\/\//);
    expect(images.venue).toMatch(/^https?:\/\//);
    expect(images).not.toHaveProperty('garment_photo');
    expect(typeof entry!.coverUrl).toBe('string');
    const cover = await download(entry!.coverUrl as string, acct.apiKey);
    expect(cover.status).toBe(200);
    expect(isImage(cover.bytes)).toBe(true);
  });

  it('saves directly from toolId + images (catalog id) + pose, listed with the model as a URL', async () => {
    const res = await api.post('/v1/template-sets', {
      label: 'Direct pro look',
      toolId: 'pro_studio',
      images: { fashion_model: ids.fashionModel, venue: ids.venue },
      pose: ids.pose,
    });
    expectSuccess(res, 201);
    const entry = (await listSets()).find((t) => t.id === res.body.id);
    expect(entry).toMatchObject({ label: 'Direct pro look', toolId: 'pro_studio', pose: ids.pose });
    expect((entry!.images as Json).fashion_model).toMatch(/^https?:\/\//);
  });

  it('stores a unicode label exactly', async () => {
    const label = 'Été 夏のルック 👗 — «naïve» ✓';
    const res = await api.post('/v1/template-sets', { label, sourceMediaId: sourceJob });
    expectSuccess(res, 201);
    expect((await listSets()).find((t) => t.id === res.body.id)?.label).toBe(label);
  });

  it('allows every saveable tool via the direct way', async () => {
    for (const toolId of [
      'virtual_model',
      'outfit_photo',
      'pro_studio',
      'jewelry_on_model',
      'clothing_ecom_pack',
      'jewelry_ecom_pack',
    ]) {
      const res = await api.post('/v1/template-sets', {
        label: `direct ${toolId}`,
        toolId,
        images: { fashion_model: ids.fashionModel },
      });
      expectSuccess(res, 201);
    }
  });
});

describe('validation', () => {
  it('answers 400 when label is missing or empty', async () => {
    expectError(await api.post('/v1/template-sets', { sourceMediaId: sourceJob }), 400, 'label');
    expectError(
      await api.post('/v1/template-sets', { label: '', sourceMediaId: sourceJob }),
      400,
      'label',
    );
  });

  it('answers 400 for a toolId outside the saveable tools', async () => {
    for (const toolId of ['remove_background', 'photo_edit', 'ai_videos', 'photo_enhance']) {
      expectError(
        await api.post('/v1/template-sets', {
          label: 'nope',
          toolId,
          images: { fashion_model: ids.fashionModel },
        }),
        400,
      );
    }
  });

  it('answers 400 for the direct way without images.fashion_model', async () => {
    expectError(
      await api.post('/v1/template-sets', {
        label: 'no model',
        toolId: 'virtual_model',
        images: { venue: ids.venue },
      }),
      400,
    );
    expectError(
      await api.post('/v1/template-sets', { label: 'no images', toolId: 'virtual_model' }),
      400,
    );
  });

  it('answers 404 for an unknown sourceMediaId', async () => {
    expectError(
      await api.post('/v1/template-sets', { label: 'ghost', sourceMediaId: 'gen_unknown_000000' }),
      404,
    );
  });

  it('answers 400 when the source job is a deterministic tool (not saveable)', async () => {
    const id = await api.submit({ toolId: 'remove_background', images: { user_photo: photo } });
    expect((await api.waitForJob(id)).status).toBe('completed');
    expectError(await api.post('/v1/template-sets', { label: 'cutout', sourceMediaId: id }), 400);
  });

  it('answers 400 when the source job has not completed (still processing)', async () => {
    const slow = await startTestServer({ provider: delayedProvider(4000) }, 'tpl-slow-');
    try {
      const a = await createAccount(slow.dataDir, 20);
      const sapi = slow.api(a.apiKey);
      const url = await sapi.uploadUrl(await garmentPng());
      const sids = await catalogIds(sapi);
      const id = await sapi.submit({
        toolId: 'virtual_model',
        images: { fashion_model: sids.fashionModel, garment_photo: url },
      });
      expect((await sapi.get(`/v1/generations/${id}`)).body.status).toBe('processing');
      expectError(
        await sapi.post('/v1/template-sets', { label: 'too early', sourceMediaId: id }),
        400,
      );
      expect((await sapi.waitForJob(id)).status).toBe('completed');
      expectSuccess(
        await sapi.post('/v1/template-sets', { label: 'now fine', sourceMediaId: id }),
        201,
      );
    } finally {
      await slow.close();
    }
  });
});

describe('deleting', () => {
  it('deletes with 200 {success:true}, removes it from the listing, and a second delete is 404', async () => {
    const res = await api.post('/v1/template-sets', {
      label: 'temporary',
      sourceMediaId: sourceJob,
    });
    expectSuccess(res, 201);
    const id = res.body.id as string;
    const del = await api.delete(`/v1/template-sets/${id}`);
    expectSuccess(del, 200);
    expect((await listSets()).map((t) => t.id)).not.toContain(id);
    expectError(await api.delete(`/v1/template-sets/${id}`), 404);
    expectError(await api.delete('/v1/template-sets/tpl_never_existed'), 404);
  });
});

describe('generating from a template set', () => {
  let templateId: string;
  beforeAll(async () => {
    const res = await api.post('/v1/template-sets', { label: 'replay', sourceMediaId: sourceJob });
    expectSuccess(res, 201);
    templateId = res.body.id as string;
  });

  it('needs only the new product image, takes toolId from the template and charges its price', async () => {
    const product = await api.uploadUrl(await garmentPng(180, 220, '#aa22aa'));
    const before = await api.balance();
    const id = await api.submit({ templateSetId: templateId, images: { garment_photo: product } });
    expect(await api.balance()).toBe(before - PRICES.virtual_model);
    // The saved ratio (4:5) is filled in because the request omits it.
    expect(await aspectOf(id)).toBeCloseTo(4 / 5, 1);
  });

  it('lets request fields override the saved ones (ratio 16:9 instead of 4:5)', async () => {
    const id = await api.submit({
      templateSetId: templateId,
      images: { garment_photo: photo },
      ratio: '16:9',
    });
    expect(await aspectOf(id)).toBeCloseTo(16 / 9, 1);
  });

  it('accepts a toolId equal to the template toolId', async () => {
    const id = await api.submit({
      templateSetId: templateId,
      toolId: 'virtual_model',
      images: { garment_photo: photo },
    });
    expect((await api.waitForJob(id)).status).toBe('completed');
  });

  it('answers 400 naming both tool ids when toolId differs from the template, charging nothing', async () => {
    const before = await api.balance();
    const res = await api.generate({
      templateSetId: templateId,
      toolId: 'outfit_photo',
      images: { garment_photos: [photo] },
    });
    expectError(res, 400, 'virtual_model', 'outfit_photo');
    expect(await api.balance()).toBe(before);
  });

  it('answers 400 naming the missing product image, and 404 for an unknown templateSetId', async () => {
    const before = await api.balance();
    expectError(
      await api.generate({ templateSetId: templateId, images: {} }),
      400,
      'virtual_model',
      'garment_photo',
    );
    expectError(
      await api.generate({ templateSetId: 'tpl_unknown_123', images: { garment_photo: photo } }),
      404,
    );
    expect(await api.balance()).toBe(before);
  });

  it('replays a pack template with only images.user_photo', async () => {
    const res = await api.post('/v1/template-sets', {
      label: 'pack look',
      toolId: 'clothing_ecom_pack',
      images: { fashion_model: ids.fashionModel },
    });
    expectSuccess(res, 201);
    const before = await api.balance();
    const id = await api.submit({ templateSetId: res.body.id, images: { user_photo: photo } });
    expect(await api.balance()).toBe(before - PRICES.clothing_ecom_pack);
    const job = await api.waitForJob(id);
    expect(job.status).toBe('completed');
    expect((job.resultUrls as string[]).length).toBeGreaterThanOrEqual(2);
  });

  it('replays a directly saved pro_studio template once shotType and stylePreset are given', async () => {
    const res = await api.post('/v1/template-sets', {
      label: 'pro',
      toolId: 'pro_studio',
      images: { fashion_model: ids.fashionModel },
    });
    expectSuccess(res, 201);
    const id = await api.submit({
      templateSetId: res.body.id,
      images: { garment_photos: [photo] },
      shotType: 'close_up',
      stylePreset: 'luxury',
    });
    expect((await api.waitForJob(id)).status).toBe('completed');
  });
});
