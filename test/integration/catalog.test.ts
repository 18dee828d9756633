/**
 * Read-only endpoints: /healthz, GET /v1/models, the fashion-model / venue / pose catalogs,
 * ready template sets (pagination, filter, detail) and GET /v1/account (spec 4.1-4.4, 4.9, 4.10).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, expectError, expectSuccess, type Api, type Json } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, type Account } from './helpers/cli';
import { isImage } from './helpers/images';
import { PRICES, TOOLS } from './helpers/tools';

let srv: TestServer;
let acct: Account;
let api: Api;

beforeAll(async () => {
  srv = await startTestServer({}, 'catalog-');
  acct = await createAccount(srv.dataDir, 123);
  api = srv.api(acct.apiKey);
});
afterAll(async () => {
  await srv?.close();
});

describe('health and versioning', () => {
  it('answers GET /healthz with 200 without any Authorization header', async () => {
    const res = await fetch(`${srv.url}/healthz`);
    expect(res.status).toBe(200);
  });

  it('serves the API only under the /v1 prefix (unversioned /models is not the API)', async () => {
    const res = await api.get('/models');
    expect(res.status).toBe(404);
  });
});

describe('GET /v1/models', () => {
  it('lists exactly the 15 tool ids with their fallback prices', async () => {
    const res = await api.get('/v1/models');
    expectSuccess(res, 200);
    const models = res.body.models as Json[];
    expect(Array.isArray(models)).toBe(true);
    expect(models.map((m) => m.id).sort()).toEqual([...TOOLS].sort());
    for (const m of models) {
      expect(typeof m.inputShape).toBe('string');
      expect(typeof m.promptMode).toBe('string');
      expect(Number.isInteger(m.fallbackPriceDiamonds)).toBe(true);
      expect(m.fallbackPriceDiamonds).toBe(PRICES[m.id as keyof typeof PRICES]);
    }
  });

  it('describes virtual_model as model_garment with an assembled prompt and remove_background as deterministic without a prompt', async () => {
    const res = await api.get('/v1/models');
    const byId = new Map((res.body.models as Json[]).map((m) => [m.id as string, m]));
    expect(byId.get('virtual_model')).toMatchObject({
      inputShape: 'model_garment',
      promptMode: 'assembled',
    });
    expect(byId.get('remove_background')).toMatchObject({
      inputShape: 'deterministic',
      promptMode: 'none',
    });
    expect(byId.get('photo_enhance')).toMatchObject({
      inputShape: 'deterministic',
      promptMode: 'none',
    });
  });
});

describe('GET /v1/fashion-models', () => {
  it('returns 20 entries by default, each with id, name, gender and imageUrl', async () => {
    const res = await api.get('/v1/fashion-models');
    expectSuccess(res, 200);
    const list = res.body.fashionModels as Json[];
    expect(list).toHaveLength(20);
    for (const m of list) {
      expect(typeof m.id).toBe('string');
      expect(typeof m.name).toBe('string');
      expect(['male', 'female']).toContain(m.gender);
      expect(typeof m.imageUrl).toBe('string');
    }
    expect(new Set(list.map((m) => m.id)).size).toBe(list.length);
  });

  it('offers at least 24 models of both genders with limit=100', async () => {
    const res = await api.get('/v1/fashion-models?limit=100');
    expectSuccess(res, 200);
    const list = res.body.fashionModels as Json[];
    expect(list.length).toBeGreaterThanOrEqual(24);
    expect(list.length).toBeLessThanOrEqual(100);
    expect(list.some((m) => m.gender === 'male')).toBe(true);
    expect(list.some((m) => m.gender === 'female')).toBe(true);
  });

  it('filters by gender', async () => {
    for (const gender of ['male', 'female']) {
      const res = await api.get(`/v1/fashion-models?gender=${gender}&limit=100`);
      expectSuccess(res, 200);
      const list = res.body.fashionModels as Json[];
      expect(list.length).toBeGreaterThan(0);
      expect(list.every((m) => m.gender === gender)).toBe(true);
    }
  });

  it('honours limit=1 and limit=100 and rejects limit=0, limit=101, limit=abc and an unknown gender with 400', async () => {
    const one = await api.get('/v1/fashion-models?limit=1');
    expectSuccess(one, 200);
    expect(one.body.fashionModels).toHaveLength(1);
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=-1',
      'limit=2.5',
      'gender=robot',
    ]) {
      expectError(await api.get(`/v1/fashion-models?${q}`), 400);
    }
  });

  it('serves each model imageUrl as a real image', async () => {
    const res = await api.get('/v1/fashion-models?limit=2');
    for (const m of res.body.fashionModels as Json[]) {
      const img = await download(m.imageUrl as string, acct.apiKey);
      expect(img.status).toBe(200);
      expect(isImage(img.bytes)).toBe(true);
    }
  });
});

describe('GET /v1/venues', () => {
  it('returns 20 by default with id, name, category, imageUrl and at least 24 with limit=100', async () => {
    const def = await api.get('/v1/venues');
    expectSuccess(def, 200);
    const list = def.body.venues as Json[];
    expect(list).toHaveLength(20);
    for (const v of list) {
      expect(typeof v.id).toBe('string');
      expect(typeof v.name).toBe('string');
      expect(typeof v.category).toBe('string');
      expect(typeof v.imageUrl).toBe('string');
    }
    const all = await api.get('/v1/venues?limit=100');
    expectSuccess(all, 200);
    expect((all.body.venues as Json[]).length).toBeGreaterThanOrEqual(24);
  });

  it('rejects limit outside 1..100 with 400', async () => {
    expectSuccess(await api.get('/v1/venues?limit=100'), 200);
    expectError(await api.get('/v1/venues?limit=0'), 400);
    expectError(await api.get('/v1/venues?limit=101'), 400);
  });

  it('serves a venue imageUrl as a real image', async () => {
    const res = await api.get('/v1/venues?limit=1');
    const v = (res.body.venues as Json[])[0]!;
    const img = await download(v.imageUrl as string, acct.apiKey);
    expect(img.status).toBe(200);
    expect(isImage(img.bytes)).toBe(true);
  });
});

describe('GET /v1/poses', () => {
  it('returns at least 24 default poses and 20 by default', async () => {
    const def = await api.get('/v1/poses');
    expectSuccess(def, 200);
    expect(def.body.poses).toHaveLength(20);
    const all = await api.get('/v1/poses?limit=100');
    expectSuccess(all, 200);
    const list = all.body.poses as Json[];
    expect(list.length).toBeGreaterThanOrEqual(24);
    expect(list.every((p) => typeof p.id === 'string')).toBe(true);
  });

  it('returns exactly 4 poses per jewelry type, distinct from the default set', async () => {
    const defaults = new Set(
      ((await api.get('/v1/poses?limit=100')).body.poses as Json[]).map((p) => p.id as string),
    );
    const seen = new Set<string>();
    for (const type of ['ring', 'necklace', 'earring', 'bracelet']) {
      const res = await api.get(`/v1/poses?type=${type}`);
      expectSuccess(res, 200);
      const list = res.body.poses as Json[];
      expect(list).toHaveLength(4);
      for (const p of list) {
        expect(defaults.has(p.id as string)).toBe(false);
        expect(seen.has(p.id as string)).toBe(false);
        seen.add(p.id as string);
      }
    }
  });

  it('rejects an unknown pose type and an out-of-range limit with 400', async () => {
    expectError(await api.get('/v1/poses?type=hat'), 400);
    expectError(await api.get('/v1/poses?limit=0'), 400);
    expectError(await api.get('/v1/poses?limit=101'), 400);
  });
});

describe('GET /v1/ready-template-sets', () => {
  async function allSets(query = ''): Promise<Json[]> {
    const out: Json[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 200; page++) {
      const q = new URLSearchParams(query);
      q.set('limit', '2');
      if (cursor) q.set('cursor', cursor);
      const res = await api.get(`/v1/ready-template-sets?${q.toString()}`);
      expectSuccess(res, 200);
      const sets = res.body.templateSets as Json[];
      expect(sets.length).toBeLessThanOrEqual(2);
      out.push(...sets);
      expect('nextCursor' in res.body).toBe(true);
      cursor = res.body.nextCursor as string | null;
      if (cursor === null) return out;
      expect(typeof cursor).toBe('string');
    }
    throw new Error('pagination never ended');
  }

  it('lists entries with id, name, category, coverUrl, shotCount and shots with ids, at least 3 sets having 3+ shots', async () => {
    const res = await api.get('/v1/ready-template-sets?limit=100');
    expectSuccess(res, 200);
    const sets = res.body.templateSets as Json[];
    expect(sets.length).toBeGreaterThanOrEqual(3);
    for (const s of sets) {
      expect(typeof s.id).toBe('string');
      expect(typeof s.name).toBe('string');
      expect(typeof s.category).toBe('string');
      expect(typeof s.coverUrl).toBe('string');
      expect(Number.isInteger(s.shotCount)).toBe(true);
      expect(Array.isArray(s.shots)).toBe(true);
      expect(s.shots).toHaveLength(s.shotCount as number);
      for (const shot of s.shots as Json[]) expect(typeof shot.id).toBe('string');
    }
    expect(sets.filter((s) => (s.shotCount as number) >= 3).length).toBeGreaterThanOrEqual(3);
  });

  it('defaults to a page of at most 20 and walks every set exactly once via cursor, ending with nextCursor null', async () => {
    const def = await api.get('/v1/ready-template-sets');
    expectSuccess(def, 200);
    expect((def.body.templateSets as Json[]).length).toBeLessThanOrEqual(20);
    const big = await api.get('/v1/ready-template-sets?limit=100');
    const expected = (big.body.templateSets as Json[]).map((s) => s.id as string);
    if (expected.length < 100) expect(big.body.nextCursor).toBeNull();
    const walked = (await allSets()).map((s) => s.id as string);
    expect(new Set(walked).size).toBe(walked.length);
    expect([...walked].sort()).toEqual([...expected].sort());
  });

  it('filters by category', async () => {
    const big = await api.get('/v1/ready-template-sets?limit=100');
    const category = (big.body.templateSets as Json[])[0]!.category as string;
    const filtered = await allSets(`category=${encodeURIComponent(category)}`);
    expect(filtered.length).toBeGreaterThan(0);
    expect(filtered.every((s) => s.category === category)).toBe(true);
    const expectedCount = (big.body.templateSets as Json[]).filter(
      (s) => s.category === category,
    ).length;
    expect(filtered).toHaveLength(expectedCount);
  });

  it('rejects limit=0 and limit=101 with 400', async () => {
    expectError(await api.get('/v1/ready-template-sets?limit=0'), 400);
    expectError(await api.get('/v1/ready-template-sets?limit=101'), 400);
  });

  it('returns one set with its full shot list, and 404 for an unknown id', async () => {
    const big = await api.get('/v1/ready-template-sets?limit=100');
    const first = (big.body.templateSets as Json[])[0]!;
    const one = await api.get(`/v1/ready-template-sets/${encodeURIComponent(first.id as string)}`);
    expectSuccess(one, 200);
    const set = one.body.templateSet as Json;
    expect(set.id).toBe(first.id);
    expect(set.shotCount).toBe(first.shotCount);
    expect((set.shots as Json[]).map((s) => s.id)).toEqual(
      (first.shots as Json[]).map((s) => s.id),
    );
    expectError(await api.get('/v1/ready-template-sets/rts_does_not_exist'), 404);
  });
});

describe('GET /v1/account', () => {
  it('reports email, diamondBalance and the full plan object', async () => {
    const res = await api.get('/v1/account');
    expectSuccess(res, 200);
    expect(res.body.email).toBe(acct.email);
    expect(res.body.diamondBalance).toBe(123);
    const plan = res.body.plan as Json;
    expect(typeof plan.isPremium).toBe('boolean');
    expect([
      'active',
      'will_expire',
      'paused',
      'billing_issue',
      'expired',
      'refunded',
      'none',
    ]).toContain(plan.status);
    expect(typeof plan.planProductId).toBe('string');
    expect(typeof plan.provider).toBe('string');
    expect(typeof plan.cancelAtPeriodEnd).toBe('boolean');
    expect(plan.renewsAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  });
});
