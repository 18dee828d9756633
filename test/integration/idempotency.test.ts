/**
 * Idempotency-Key on POST /v1/generations and POST /v1/catalog-jobs: the same key and body replay
 * the first response and charge once; the same key with another body is 409.
 * (Uploads are covered in uploads.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, type Api, type Json } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, type Account } from './helpers/cli';
import { garmentPng } from './helpers/images';

let srv: TestServer;
let acct: Account;
let api: Api;
let url: string;

beforeAll(async () => {
  srv = await startTestServer({}, 'idem-');
  acct = await createAccount(srv.dataDir, 200);
  api = srv.api(acct.apiKey);
  url = await api.uploadUrl(await garmentPng());
});
afterAll(async () => {
  await srv?.close();
});

let n = 0;
const freshKey = (): string => `idem-${process.pid}-${Date.now()}-${++n}`;

describe('POST /v1/generations', () => {
  it('replays the same response for the same key and body and charges once', async () => {
    const key = freshKey();
    const body = { toolId: 'photo_edit', images: { user_photo: url }, customPrompt: 'add a soft shadow' };
    const before = await api.balance();
    const first = await api.generate(body, { 'Idempotency-Key': key });
    expectSuccess(first, 202);
    const second = await api.generate(body, { 'Idempotency-Key': key });
    expect(second.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(await api.balance()).toBe(before - 3);
    expect((await api.waitForJob(first.body.id as string)).status).toBe('completed');
    const third = await api.generate(body, { 'Idempotency-Key': key });
    expect(third.status).toBe(202);
    expect(third.body.id).toBe(first.body.id);
    expect(await api.balance()).toBe(before - 3);
  });

  it('answers 409 for the same key with a different body and charges nothing more', async () => {
    const key = freshKey();
    const before = await api.balance();
    expectSuccess(await api.generate({ toolId: 'remove_background', images: { user_photo: url } }, { 'Idempotency-Key': key }), 202);
    const res = await api.generate({ toolId: 'photo_enhance', images: { user_photo: url } }, { 'Idempotency-Key': key });
    expectError(res, 409);
    expect(await api.balance()).toBe(before - 1);
  });

  it('creates separate jobs for different keys with the same body', async () => {
    const body = { toolId: 'remove_background', images: { user_photo: url } };
    const before = await api.balance();
    const a = await api.generate(body, { 'Idempotency-Key': freshKey() });
    const b = await api.generate(body, { 'Idempotency-Key': freshKey() });
    expectSuccess(a, 202);
    expectSuccess(b, 202);
    expect(a.body.id).not.toBe(b.body.id);
    expect(await api.balance()).toBe(before - 2);
  });

  it('charges once when the same key and body arrive in parallel', async () => {
    const key = freshKey();
    const body = { toolId: 'amateur_to_pro', images: { user_photo: url } };
    const before = await api.balance();
    const results = await Promise.all(Array.from({ length: 6 }, () => api.generate(body, { 'Idempotency-Key': key })));
    const ok = results.filter((r) => r.status === 202);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of results) expect([202, 409]).toContain(r.status);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    expect(await api.balance()).toBe(before - 2);
  });

  it('does not replay a 402 as a charge: a refused request leaves the balance untouched on retry', async () => {
    const poor = await createAccount(srv.dataDir, 0);
    const p = srv.api(poor.apiKey);
    const key = freshKey();
    const body = { toolId: 'remove_background', images: { user_photo: url } };
    expectError(await p.generate(body, { 'Idempotency-Key': key }), 402);
    expectError(await p.generate(body, { 'Idempotency-Key': key }), 402);
    expect(await p.balance()).toBe(0);
  });

  it('keeps keys per account: another account may use the same Idempotency-Key value', async () => {
    const key = freshKey();
    const other = await createAccount(srv.dataDir, 10);
    const o = srv.api(other.apiKey);
    const oUrl = await o.uploadUrl(await garmentPng());
    const mine = await api.generate({ toolId: 'remove_background', images: { user_photo: url } }, { 'Idempotency-Key': key });
    const theirs = await o.generate({ toolId: 'remove_background', images: { user_photo: oUrl } }, { 'Idempotency-Key': key });
    expectSuccess(mine, 202);
    expectSuccess(theirs, 202);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await o.balance()).toBe(9);
    // And the other account cannot read my job through the replay.
    expectError(await o.get(`/v1/generations/${mine.body.id as string}`), 404);
  });
});

describe('POST /v1/catalog-jobs', () => {
  it('replays the same response for the same key and body and charges once; 409 for a different body', async () => {
    const sets = await api.get('/v1/ready-template-sets?limit=100');
    const set = (sets.body.templateSets as Json[]).find((s) => (s.shotCount as number) >= 2)!;
    const shots = (set.shots as Json[]).map((s) => s.id as string);
    const key = freshKey();
    const body = { readyTemplateSetId: set.id, images: { garment_photo: url }, shotIds: shots.slice(0, 1) };
    const before = await api.balance();
    const first = await api.post('/v1/catalog-jobs', body, { headers: { 'Idempotency-Key': key } });
    expectSuccess(first, 202);
    const again = await api.post('/v1/catalog-jobs', body, { headers: { 'Idempotency-Key': key } });
    expect(again.status).toBe(202);
    expect(again.body.mediaItemId).toBe(first.body.mediaItemId);
    expect(await api.balance()).toBe(before - 4);
    const different = await api.post('/v1/catalog-jobs', { ...body, shotIds: shots.slice(0, 2) }, { headers: { 'Idempotency-Key': key } });
    expectError(different, 409);
    expect(await api.balance()).toBe(before - 4);
  });
});
