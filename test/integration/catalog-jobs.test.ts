/**
 * Catalog jobs (spec 3.2, 4.10, refund rules): POST /v1/catalog-jobs against ready template sets,
 * cost 4 x shots, progress via GET /v1/generations/{mediaItemId}, full refund only when every shot
 * fails, no per-shot refund on partial failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, expectError, expectSuccess, sleep, type Api, type Json } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, type Account } from './helpers/cli';
import { garmentPng, imageSize, isImage } from './helpers/images';
import { delayedProvider, flakyProvider } from './helpers/providers';

let srv: TestServer;
let acct: Account;
let api: Api;
let photo: string;
let set: Json; // a ready set with at least 3 shots

async function pickSet(a: Api): Promise<Json> {
  const res = await a.get('/v1/ready-template-sets?limit=100');
  expectSuccess(res, 200);
  const found = (res.body.templateSets as Json[]).find((s) => (s.shotCount as number) >= 3);
  expect(found, 'a ready template set with 3+ shots').toBeDefined();
  return found!;
}

const shotIds = (s: Json): string[] => (s.shots as Json[]).map((x) => x.id as string);

beforeAll(async () => {
  srv = await startTestServer({}, 'catjobs-');
  acct = await createAccount(srv.dataDir, 1000);
  api = srv.api(acct.apiKey);
  photo = await api.uploadUrl(await garmentPng());
  set = await pickSet(api);
});
afterAll(async () => {
  await srv?.close();
});

describe('happy path', () => {
  it('runs every shot of a set: 202 pack_processing, costs 4 per shot, completes with one image per shot', async () => {
    const before = await api.balance();
    const res = await api.post('/v1/catalog-jobs', {
      readyTemplateSetId: set.id,
      images: { garment_photo: photo },
    });
    expectSuccess(res, 202);
    expect(res.body.status).toBe('pack_processing');
    expect(typeof res.body.mediaItemId).toBe('string');
    expect(res.body.packTotal).toBe(set.shotCount);
    expect(res.body.diamondCost).toBe(4 * (set.shotCount as number));
    expect(await api.balance()).toBe(before - 4 * (set.shotCount as number));

    const job = await api.waitForJob(res.body.mediaItemId as string, 90_000);
    expect(job.status).toBe('completed');
    expect(job.id).toBe(res.body.mediaItemId);
    expect(job.packTotal).toBe(set.shotCount);
    expect(job.packCompleted).toBe(set.shotCount);
    expect(job.packFailed).toBe(0);
    expect(job.errorMessage).toBeNull();
    const urls = job.resultUrls as string[];
    expect(urls).toHaveLength(set.shotCount as number);
    for (const url of urls) {
      const img = await download(url, acct.apiKey);
      expect(img.status).toBe(200);
      expect(isImage(img.bytes)).toBe(true);
    }
    // Completed: nothing refunded.
    expect(await api.balance()).toBe(before - 4 * (set.shotCount as number));
  });

  it('runs only the requested shotIds, charges 4 per requested shot and honours ratio', async () => {
    const chosen = shotIds(set).slice(0, 2);
    const before = await api.balance();
    const res = await api.post('/v1/catalog-jobs', {
      readyTemplateSetId: set.id,
      images: { user_photo: photo },
      shotIds: chosen,
      ratio: '1:1',
    });
    expectSuccess(res, 202);
    expect(res.body.packTotal).toBe(2);
    expect(res.body.diamondCost).toBe(8);
    expect(await api.balance()).toBe(before - 8);
    const job = await api.waitForJob(res.body.mediaItemId as string, 60_000);
    expect(job.status).toBe('completed');
    expect(job.resultUrls).toHaveLength(2);
    const { width, height } = await imageSize(
      (await download((job.resultUrls as string[])[0]!, acct.apiKey)).bytes,
    );
    expect(width / height).toBeCloseTo(1, 1);
  });

  it('is listed in GET /v1/ready-template-sets/{id} with the same shots the job runs', async () => {
    const one = await api.get(`/v1/ready-template-sets/${set.id as string}`);
    expectSuccess(one, 200);
    expect(shotIds(one.body.templateSet as Json)).toEqual(shotIds(set));
  });
});

describe('errors (nothing charged)', () => {
  it('answers 400 for missing readyTemplateSetId, missing images and an unknown shot id; 404 for an unknown set', async () => {
    const before = await api.balance();
    expectError(
      await api.post('/v1/catalog-jobs', { images: { garment_photo: photo } }),
      400,
      'readyTemplateSetId',
    );
    expectError(await api.post('/v1/catalog-jobs', { readyTemplateSetId: set.id }), 400);
    expectError(
      await api.post('/v1/catalog-jobs', { readyTemplateSetId: set.id, images: {} }),
      400,
    );
    expectError(
      await api.post('/v1/catalog-jobs', {
        readyTemplateSetId: set.id,
        images: { garment_photo: photo },
        shotIds: ['shot_nope'],
      }),
      400,
    );
    expectError(
      await api.post('/v1/catalog-jobs', {
        readyTemplateSetId: set.id,
        images: { garment_photo: photo },
        shotIds: [],
      }),
      400,
    );
    expectError(
      await api.post('/v1/catalog-jobs', {
        readyTemplateSetId: 'rts_unknown',
        images: { garment_photo: photo },
      }),
      404,
    );
    expect(await api.balance()).toBe(before);
  });

  it('answers 402 when the balance is below the full shot count cost, but accepts a subset it can pay', async () => {
    const cost = 4 * (set.shotCount as number);
    const poor = await createAccount(srv.dataDir, cost - 1);
    const p = srv.api(poor.apiKey);
    const url = await p.uploadUrl(await garmentPng());
    const res = await p.post('/v1/catalog-jobs', {
      readyTemplateSetId: set.id,
      images: { garment_photo: url },
    });
    expectError(res, 402, 'Insufficient diamonds', String(cost), String(cost - 1));
    expect(await p.balance()).toBe(cost - 1);
    const sub = await p.post('/v1/catalog-jobs', {
      readyTemplateSetId: set.id,
      images: { garment_photo: url },
      shotIds: shotIds(set).slice(0, 1),
    });
    expectSuccess(sub, 202);
    expect(sub.body.diamondCost).toBe(4);
    expect(await p.balance()).toBe(cost - 5);
  });
});

describe('progress and refunds (steered provider)', () => {
  it('fills resultUrls shot by shot while packCompleted grows', async () => {
    const slow = await startTestServer(
      { provider: delayedProvider(800), concurrency: 1 },
      'catjobs-slow-',
    );
    try {
      const a = await createAccount(slow.dataDir, 100);
      const sapi = slow.api(a.apiKey);
      const url = await sapi.uploadUrl(await garmentPng());
      const s = await pickSet(sapi);
      const res = await sapi.post('/v1/catalog-jobs', {
        readyTemplateSetId: s.id,
        images: { garment_photo: url },
      });
      expectSuccess(res, 202);
      const id = res.body.mediaItemId as string;
      let sawPartial = false;
      let last: Json = {};
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const poll = await sapi.get(`/v1/generations/${id}`);
        expectSuccess(poll, 200);
        last = poll.body;
        expect(last.packTotal).toBe(s.shotCount);
        expect((last.resultUrls as string[]).length).toBe(last.packCompleted);
        if (last.status === 'completed' || last.status === 'failed') break;
        if (
          (last.packCompleted as number) > 0 &&
          (last.packCompleted as number) < (last.packTotal as number)
        )
          sawPartial = true;
        await sleep(150);
      }
      expect(last.status).toBe('completed');
      expect(sawPartial).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('refunds the whole charge exactly once when every shot fails', async () => {
    // Failing after a pause keeps the charge visible before the refund.
    const bad = await startTestServer(
      { provider: flakyProvider(() => true, 1500) },
      'catjobs-fail-',
    );
    try {
      const a = await createAccount(bad.dataDir, 100);
      const bapi = bad.api(a.apiKey);
      const url = await bapi.uploadUrl(await garmentPng());
      const s = await pickSet(bapi);
      const res = await bapi.post('/v1/catalog-jobs', {
        readyTemplateSetId: s.id,
        images: { garment_photo: url },
      });
      expectSuccess(res, 202);
      expect(await bapi.balance()).toBe(100 - 4 * (s.shotCount as number));
      const job = await bapi.waitForJob(res.body.mediaItemId as string, 60_000);
      expect(job.status).toBe('failed');
      expect(job.resultUrls).toEqual([]);
      expect(typeof job.errorMessage).toBe('string');
      expect(job.packFailed).toBe(s.shotCount);
      expect(job.packCompleted).toBe(0);
      expect(await bapi.balance()).toBe(100);
      await sleep(500);
      expect(await bapi.balance()).toBe(100);
    } finally {
      await bad.close();
    }
  });

  it('does not refund per shot when only some shots fail (job completes, packFailed reported)', async () => {
    let calls = 0;
    const flaky = flakyProvider(() => calls++ === 0);
    const srv2 = await startTestServer({ provider: flaky, concurrency: 1 }, 'catjobs-partial-');
    try {
      const a = await createAccount(srv2.dataDir, 100);
      const papi = srv2.api(a.apiKey);
      const url = await papi.uploadUrl(await garmentPng());
      const s = await pickSet(papi);
      const res = await papi.post('/v1/catalog-jobs', {
        readyTemplateSetId: s.id,
        images: { garment_photo: url },
      });
      expectSuccess(res, 202);
      const cost = 4 * (s.shotCount as number);
      const job = await papi.waitForJob(res.body.mediaItemId as string, 60_000);
      expect(job.status).toBe('completed');
      expect(job.packFailed).toBe(1);
      expect(job.packCompleted).toBe((s.shotCount as number) - 1);
      expect(job.resultUrls).toHaveLength((s.shotCount as number) - 1);
      await sleep(300);
      expect(await papi.balance()).toBe(100 - cost);
    } finally {
      await srv2.close();
    }
  });
});
