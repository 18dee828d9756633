/**
 * POST /v1/generations and GET /v1/generations/{id} (spec 2.2, 3.1, 4.6, 4.7, 7): all 15 tools run
 * to completion through the default local provider, prices charged, validation errors (nothing
 * charged), 402, and catalog ids vs URLs for fashion_model / venue.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  download,
  expectError,
  expectSuccess,
  type Api,
  type ApiResponse,
  type Json,
} from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, createKey, type Account } from './helpers/cli';
import {
  garmentJpeg,
  garmentPng,
  hasTransparentPixels,
  imageSize,
  isImage,
  isMp4,
  mp4DurationSeconds,
} from './helpers/images';
import {
  catalogIds,
  PACK_TOOLS,
  PRICES,
  REQUIRED_IMAGES,
  requestFor,
  TOOLS,
  type CatalogIds,
  type Tool,
} from './helpers/tools';

let srv: TestServer;
let acct: Account;
let api: Api;
let ids: CatalogIds;
let photo: string;
let photo2: string;

const START = 1000;

beforeAll(async () => {
  srv = await startTestServer({}, 'gen-');
  acct = await createAccount(srv.dataDir, START);
  api = srv.api(acct.apiKey);
  ids = await catalogIds(api);
  photo = await api.uploadUrl(await garmentPng(200, 250), 'image/png');
  photo2 = await api.uploadUrl(await garmentJpeg(240, 300, '#208020'), 'image/jpeg');
});
afterAll(async () => {
  await srv?.close();
});

describe('every tool completes through the local provider', () => {
  type Submitted = { res: ApiResponse; charged: number; job: Promise<Json> };
  const submitted = new Map<Tool, Submitted>();

  beforeAll(async () => {
    // Polling 15 jobs is many calls (more on a loaded machine, where jobs take longer): a second
    // key of the account polls, with a cap no run reaches, so the daily cap is not what this tests.
    const poller = srv.api((await createKey(srv.dataDir, acct.email, 1_000_000)).apiKey);
    // Submitted one after another so each balance drop belongs to exactly one tool; then all run.
    let balance = await api.balance();
    for (const tool of TOOLS) {
      const res = await api.generate(requestFor(tool, photo, ids, photo2));
      const after = await api.balance();
      const job =
        res.status === 202
          ? poller.waitForJob(res.body.id as string, 90_000)
          : Promise.reject(new Error(`not accepted: ${res.text}`));
      job.catch(() => undefined);
      submitted.set(tool, { res, charged: balance - after, job });
      balance = after;
    }
  }, 120_000);

  it.each(TOOLS)(
    'runs %s: 202 processing, charges its price, completes with downloadable outputs',
    async (tool) => {
      const s = submitted.get(tool)!;
      expectSuccess(s.res, 202);
      expect(s.res.body.status).toBe('processing');
      expect(typeof s.res.body.id).toBe('string');
      expect(s.charged).toBe(PRICES[tool]);

      const job = await s.job;
      expect(job.id).toBe(s.res.body.id);
      expect(job.status, `job failed: ${job.errorMessage as string}`).toBe('completed');
      expect(job.errorMessage).toBeNull();
      const urls = job.resultUrls as string[];
      if (PACK_TOOLS.includes(tool)) expect(urls.length).toBeGreaterThanOrEqual(2);
      else if (tool === 'outfit_photo') expect(urls.length).toBeGreaterThanOrEqual(1);
      else expect(urls).toHaveLength(1);
      expect(new Set(urls).size).toBe(urls.length);
      for (const url of urls) {
        const got = await download(url, acct.apiKey);
        expect(got.status).toBe(200);
        if (tool === 'ai_videos') {
          expect(isMp4(got.bytes)).toBe(true);
          expect(got.contentType).toContain('video/mp4');
        } else {
          expect(isImage(got.bytes)).toBe(true);
          expect(got.contentType).toMatch(/^image\/(png|jpeg|webp)/);
          const size = await imageSize(got.bytes);
          expect(size.width).toBeGreaterThan(0);
          expect(size.height).toBeGreaterThan(0);
        }
      }
    },
  );

  it('reframes photo_reframe output to the 4:5 target ratio', async () => {
    const job = await submitted.get('photo_reframe')!.job;
    const { width, height } = await imageSize(
      (await download((job.resultUrls as string[])[0]!, acct.apiKey)).bytes,
    );
    expect(width / height).toBeCloseTo(4 / 5, 1);
  });

  it('renders virtual_model at the requested 4:5 ratio', async () => {
    const job = await submitted.get('virtual_model')!.job;
    const { width, height } = await imageSize(
      (await download((job.resultUrls as string[])[0]!, acct.apiKey)).bytes,
    );
    expect(width / height).toBeCloseTo(4 / 5, 1);
  });

  it('upscales with photo_enhance (output larger than the 200x250 input)', async () => {
    const job = await submitted.get('photo_enhance')!.job;
    const { width, height } = await imageSize(
      (await download((job.resultUrls as string[])[0]!, acct.apiKey)).bytes,
    );
    expect(width).toBeGreaterThan(200);
    expect(height).toBeGreaterThan(250);
  });

  it('cuts the background out with remove_background (the result has transparent pixels)', async () => {
    const job = await submitted.get('remove_background')!.job;
    const bytes = (await download((job.resultUrls as string[])[0]!, acct.apiKey)).bytes;
    expect(await hasTransparentPixels(bytes)).toBe(true);
  });

  it('makes an ai_videos clip of the requested duration (2 s)', async () => {
    const job = await submitted.get('ai_videos')!.job;
    const video = (await download((job.resultUrls as string[])[0]!, acct.apiKey)).bytes;
    expect(mp4DurationSeconds(video)).toBeCloseTo(2, 0);
  });

  it('charges each tool exactly once in total (balance = start - sum of prices, nothing refunded on success)', async () => {
    await Promise.all([...submitted.values()].map((s) => s.job.catch(() => undefined)));
    const sum = TOOLS.reduce((acc, t) => acc + PRICES[t], 0);
    expect(sum).toBe(88);
    // Other tests in this file may spend too, so compare against the charges recorded here.
    const charged = [...submitted.values()].reduce((acc, s) => acc + s.charged, 0);
    expect(charged).toBe(88);
  });
});

describe('catalog ids and URLs for fashion_model and venue', () => {
  it('accepts fashion_model and venue as direct image URLs', async () => {
    const model = await api.uploadUrl(await garmentJpeg(300, 400, '#c08060'), 'image/jpeg');
    const venue = await api.uploadUrl(await garmentJpeg(400, 300, '#6080c0'), 'image/jpeg');
    const id = await api.submit({
      toolId: 'virtual_model',
      images: { fashion_model: model, venue, garment_photo: photo },
    });
    const job = await api.waitForJob(id);
    expect(job.status).toBe('completed');
    expect(job.resultUrls).toHaveLength(1);
  });

  it('accepts jewelry_images[] instead of jewelry_image', async () => {
    const id = await api.submit({
      toolId: 'jewelry_on_model',
      images: { jewelry_images: [photo, photo2] },
      jewelryType: 'necklace',
    });
    expect((await api.waitForJob(id)).status).toBe('completed');
  });

  it('accepts optional garment_photos[] on virtual_model', async () => {
    const id = await api.submit({
      toolId: 'virtual_model',
      images: { fashion_model: ids.fashionModel, garment_photo: photo, garment_photos: [photo2] },
      customPrompt: 'tuck the shirt in',
    });
    expect((await api.waitForJob(id)).status).toBe('completed');
  });

  it('rejects an unknown fashion_model or venue catalog id with 400 and charges nothing', async () => {
    const before = await api.balance();
    expectError(
      await api.generate({
        toolId: 'virtual_model',
        images: { fashion_model: 'fm_nobody_here', garment_photo: photo },
      }),
      400,
    );
    expectError(
      await api.generate({
        toolId: 'virtual_model',
        images: { fashion_model: ids.fashionModel, venue: 'venue_nowhere', garment_photo: photo },
      }),
      400,
    );
    expect(await api.balance()).toBe(before);
  });

  it('refuses a catalog id in a field that must be a URL (garment_photo, user_photo)', async () => {
    const before = await api.balance();
    expectError(
      await api.generate({
        toolId: 'virtual_model',
        images: { fashion_model: ids.fashionModel, garment_photo: ids.fashionModel },
      }),
      400,
    );
    expectError(
      await api.generate({ toolId: 'remove_background', images: { user_photo: ids.venue } }),
      400,
    );
    expect(await api.balance()).toBe(before);
  });
});

describe('validation errors: 400, nothing charged', () => {
  // Its own account: nothing but these requests touches its balance, and each test checks its own.
  let api: Api;
  let photo: string;
  beforeAll(async () => {
    const own = await createAccount(srv.dataDir, START);
    api = srv.api(own.apiKey);
    photo = await api.uploadUrl(await garmentPng(200, 250), 'image/png');
  });
  let balanceBefore: number;
  beforeEach(async () => {
    balanceBefore = await api.balance();
  });
  /** A test that expects only refusals ends with the balance it started with. */
  const expectNothingCharged = async () => expect(await api.balance()).toBe(balanceBefore);
  /** A test that spends gets an account of its own and says what it spent. */
  async function spender(): Promise<{ api: Api; photo: string }> {
    const own = srv.api((await createAccount(srv.dataDir, START)).apiKey);
    return { api: own, photo: await own.uploadUrl(await garmentPng(200, 250), 'image/png') };
  }

  it('names the bad toolId for an unknown tool', async () => {
    expectError(
      await api.generate({ toolId: 'pose_variation', images: { user_photo: photo } }),
      400,
      'pose_variation',
    );
    expectError(
      await api.generate({ toolId: 'VIRTUAL_MODEL', images: { user_photo: photo } }),
      400,
      'VIRTUAL_MODEL',
    );
    await expectNothingCharged();
  });

  it('requires toolId when no templateSetId is given', async () => {
    expectError(await api.generate({ images: { user_photo: photo } }), 400);
    await expectNothingCharged();
  });

  const missing: [Tool, string][] = TOOLS.flatMap((tool) =>
    REQUIRED_IMAGES[tool].map((field) => [tool, field] as [Tool, string]),
  );
  it.each(missing)('names %s and the missing field %s', async (tool, field) => {
    const body = requestFor(tool, photo, ids, photo2);
    const images = { ...(body.images as Json) };
    delete images[field];
    if (field === 'jewelry_image') delete images.jewelry_images;
    expectError(await api.generate({ ...body, images }), 400, tool, field);
    await expectNothingCharged();
  });

  it('rejects a request with no images object at all', async () => {
    expectError(
      await api.generate({ toolId: 'remove_background' }),
      400,
      'remove_background',
      'user_photo',
    );
    await expectNothingCharged();
  });

  it('requires shotType and stylePreset for pro_studio and only the decided values', async () => {
    const base = requestFor('pro_studio', photo, ids);
    const { shotType: _s, ...noShot } = base;
    const { stylePreset: _p, ...noStyle } = base;
    expectError(await api.generate(noShot), 400);
    expectError(await api.generate(noStyle), 400);
    expectError(await api.generate({ ...base, shotType: 'wide_angle' }), 400);
    expectError(await api.generate({ ...base, stylePreset: 'baroque' }), 400);
    await expectNothingCharged();
  });

  it('accepts every decided pro_studio shotType and stylePreset, charging each once', async () => {
    const own = await spender();
    const accepted: string[] = [];
    const shotTypes = ['full_body', 'half_body', 'close_up', 'back_view', 'side_view'];
    const styles = ['minimal', 'editorial', 'streetwear', 'luxury', 'catalog'];
    for (let i = 0; i < 5; i++) {
      const res = await own.api.generate({
        ...requestFor('pro_studio', own.photo, ids),
        shotType: shotTypes[i],
        stylePreset: styles[i],
      });
      expectSuccess(res, 202);
      accepted.push(res.body.id as string);
    }
    for (const id of accepted) expect((await own.api.waitForJob(id)).status).toBe('completed');
    expect(await own.api.balance()).toBe(START - 5 * PRICES.pro_studio);
  });

  it('requires a valid jewelryType for jewelry_on_model', async () => {
    const base = requestFor('jewelry_on_model', photo, ids);
    const { jewelryType: _j, ...noType } = base;
    expectError(await api.generate(noType), 400);
    expectError(await api.generate({ ...base, jewelryType: 'tiara' }), 400);
    await expectNothingCharged();
  });

  it('requires motionPrompt for ai_videos', async () => {
    const { motionPrompt: _m, ...rest } = requestFor('ai_videos', photo, ids);
    expectError(await api.generate(rest), 400);
    expectError(await api.generate({ ...rest, motionPrompt: '' }), 400);
    await expectNothingCharged();
  });

  it('requires a known pose for pose_angle_switch', async () => {
    const { pose: _p, ...rest } = requestFor('pose_angle_switch', photo, ids);
    expectError(await api.generate(rest), 400);
    expectError(await api.generate({ ...rest, pose: 'pose_that_does_not_exist' }), 400);
    await expectNothingCharged();
  });

  it('requires customPrompt for photo_edit', async () => {
    const { customPrompt: _c, ...rest } = requestFor('photo_edit', photo, ids);
    expectError(await api.generate(rest), 400);
    expectError(await api.generate({ ...rest, customPrompt: '   ' }), 400);
    await expectNothingCharged();
  });

  it('requires a W:H targetRatio for photo_reframe', async () => {
    const { targetRatio: _t, ...rest } = requestFor('photo_reframe', photo, ids);
    expectError(await api.generate(rest), 400);
    expectError(await api.generate({ ...rest, targetRatio: 'wide' }), 400);
    expectError(await api.generate({ ...rest, targetRatio: '0:5' }), 400);
    await expectNothingCharged();
  });

  it('limits virtual_model ratio to 1:1, 4:5, 3:4, 9:16, 16:9', async () => {
    const base = requestFor('virtual_model', photo, ids);
    expectError(await api.generate({ ...base, ratio: '4:3' }), 400);
    expectError(await api.generate({ ...base, ratio: 'auto' }), 400);
    expectError(await api.generate({ ...base, ratio: 'square' }), 400);
    await expectNothingCharged();
  });

  it('rejects an unknown ratio on other tools and accepts a listed one, charging only that', async () => {
    const own = await spender();
    expectError(
      await own.api.generate({
        ...requestFor('model_to_flat_lay', own.photo, ids),
        ratio: '7:3:1',
      }),
      400,
    );
    expect(await own.api.balance()).toBe(START);
    const res = await own.api.generate({
      ...requestFor('model_to_flat_lay', own.photo, ids),
      ratio: '4:3',
    });
    expectSuccess(res, 202);
    expect((await own.api.waitForJob(res.body.id as string)).status).toBe('completed');
    expect(await own.api.balance()).toBe(START - PRICES.model_to_flat_lay);
  });
});

describe('402 insufficient diamonds', () => {
  it('refuses a job the balance cannot pay, names required amount and balance, charges nothing', async () => {
    const poor = await createAccount(srv.dataDir, 3);
    const p = srv.api(poor.apiKey);
    const url = await p.uploadUrl(await garmentPng());
    const res = await p.generate({
      toolId: 'virtual_model',
      images: { fashion_model: ids.fashionModel, garment_photo: url },
    });
    expectError(res, 402, 'Insufficient diamonds', '4', '3');
    expect(await p.balance()).toBe(3);
    const video = await p.generate({
      toolId: 'ai_videos',
      images: { user_photo: url },
      motionPrompt: 'spin',
    });
    expectError(video, 402, 'Insufficient diamonds', '20', '3');
    expect(await p.balance()).toBe(3);
  });

  it('accepts a job that costs exactly the whole balance and leaves 0', async () => {
    const exact = await createAccount(srv.dataDir, 2);
    const p = srv.api(exact.apiKey);
    const url = await p.uploadUrl(await garmentPng());
    const id = await p.submit({
      toolId: 'photo_reframe',
      images: { user_photo: url },
      targetRatio: '1:1',
    });
    expect(await p.balance()).toBe(0);
    expect((await p.waitForJob(id)).status).toBe('completed');
    expect(await p.balance()).toBe(0);
    expectError(
      await p.generate({ toolId: 'remove_background', images: { user_photo: url } }),
      402,
      'Insufficient diamonds',
      '1',
      '0',
    );
  });
});

describe('ai_videos duration', () => {
  it('defaults to a 5 second clip when duration is omitted', async () => {
    const id = await api.submit({
      toolId: 'ai_videos',
      images: { user_photo: photo },
      motionPrompt: 'gentle sway',
    });
    const job = await api.waitForJob(id, 90_000);
    expect(job.status).toBe('completed');
    const video = (await download((job.resultUrls as string[])[0]!, acct.apiKey)).bytes;
    expect(isMp4(video)).toBe(true);
    expect(mp4DurationSeconds(video)).toBeCloseTo(5, 0);
  });
});

describe('GET /v1/generations/{id}', () => {
  it('returns the full job shape while processing and after completion', async () => {
    const id = await api.submit({ toolId: 'amateur_to_pro', images: { user_photo: photo } });
    const first = await api.get(`/v1/generations/${id}`);
    expectSuccess(first, 200);
    expect(first.body.id).toBe(id);
    expect(['processing', 'completed']).toContain(first.body.status);
    expect(Array.isArray(first.body.resultUrls)).toBe(true);
    expect(first.body.errorMessage).toBeNull();
    const done = await api.waitForJob(id);
    expect(done).toMatchObject({ success: true, id, status: 'completed', errorMessage: null });
  });

  it('answers 404 for an unknown id', async () => {
    expectError(await api.get('/v1/generations/gen_00000000000000000000'), 404);
  });
});
