/**
 * Daily request cap (spec 8): per key, per UTC day, default 500, counts every call (catalog reads,
 * uploads, generations, polls, and calls that end in 400/404), enforced right after auth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, type ApiResponse } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, createKey, type Account } from './helpers/cli';
import { garmentPng } from './helpers/images';

let srv: TestServer;
let acct: Account;

beforeAll(async () => {
  srv = await startTestServer({}, 'cap-');
  acct = await createAccount(srv.dataDir, 50);
});
afterAll(async () => {
  await srv?.close();
});

describe('custom daily cap', () => {
  it('answers the 4th call of a --daily-cap 3 key with 429 naming the cap, counting calls that ended in 404 and 400', async () => {
    const key = await createKey(srv.dataDir, acct.email, 3);
    const api = srv.api(key.apiKey);
    expectError(await api.get('/v1/generations/gen_missing'), 404);
    expectError(await api.get('/v1/poses?limit=0'), 400);
    expectSuccess(await api.get('/v1/models'), 200);
    const fourth = await api.get('/v1/account');
    expectError(fourth, 429, '3', 'reached', 'key');
  });

  it('applies the reached cap to every endpoint, and a 429 generation charges nothing', async () => {
    const key = await createKey(srv.dataDir, acct.email, 1);
    const api = srv.api(key.apiKey);
    const owner = srv.api(acct.apiKey);
    const url = await owner.uploadUrl(await garmentPng());
    expectSuccess(await api.get('/v1/venues'), 200);
    const before = await owner.balance();
    const calls: Promise<ApiResponse>[] = [
      api.get('/v1/models'),
      api.get('/v1/fashion-models'),
      api.get('/v1/poses'),
      api.get('/v1/ready-template-sets'),
      api.get('/v1/template-sets'),
      api.upload(await garmentPng(), 'image/png'),
      api.generate({ toolId: 'remove_background', images: { user_photo: url } }),
      api.post('/v1/catalog-jobs', {
        readyTemplateSetId: 'whatever',
        images: { garment_photo: url },
      }),
      api.get('/v1/account'),
    ];
    for (const res of await Promise.all(calls)) expectError(res, 429, '1', 'reached', 'key');
    expect(await owner.balance()).toBe(before);
  });

  it('keeps separate caps for different keys of the same account', async () => {
    const k1 = await createKey(srv.dataDir, acct.email, 2);
    const k2 = await createKey(srv.dataDir, acct.email, 2);
    const a1 = srv.api(k1.apiKey);
    const a2 = srv.api(k2.apiKey);
    expectSuccess(await a1.get('/v1/models'), 200);
    expectSuccess(await a1.get('/v1/models'), 200);
    expectError(await a1.get('/v1/models'), 429, '2');
    expectSuccess(await a2.get('/v1/models'), 200);
    expectSuccess(await a2.get('/v1/account'), 200);
    expectError(await a2.get('/v1/account'), 429, '2');
    // The account's original key (default cap) is untouched by the other keys' usage.
    expectSuccess(await srv.api(acct.apiKey).get('/v1/models'), 200);
  });

  it('counts uploads, generations and polls', async () => {
    const fresh = await createAccount(srv.dataDir, 10);
    const key = await createKey(srv.dataDir, fresh.email, 4);
    const api = srv.api(key.apiKey);
    const url = await api.uploadUrl(await garmentPng()); // 1
    const id = await api.submit({ toolId: 'remove_background', images: { user_photo: url } }); // 2
    expectSuccess(await api.get(`/v1/generations/${id}`), 200); // 3
    expectSuccess(await api.get(`/v1/generations/${id}`), 200); // 4
    expectError(await api.get(`/v1/generations/${id}`), 429, '4', 'reached', 'key');
  });
});

describe('default daily cap', () => {
  it('allows exactly 500 calls for a key created without --daily-cap and answers the 501st with 429 naming 500', async () => {
    const other = await createAccount(srv.dataDir, 0);
    const api = srv.api(other.apiKey);
    let next = 0;
    const statuses: number[] = [];
    const worker = async () => {
      while (next < 500) {
        next += 1;
        const res = await api.get('/v1/models');
        statuses.push(res.status);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(statuses).toHaveLength(500);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expectError(await api.get('/v1/models'), 429, '500', 'reached', 'key');
  });
});
