/**
 * Idempotency-Key on POST /v1/generations, POST /v1/catalog-jobs and POST /v1/uploads: the same
 * key and body replay the first response and charge once, also when the first request spent the
 * last diamonds and when the duplicates arrive in parallel; the same key with another body is 409;
 * a request that failed after the charge (500, refunded) does not hold its key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, type Api, type ApiResponse, type Json } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, type Account } from './helpers/cli';
import { coreRows, ledgerOfJob as ledgerOf } from './helpers/core-storage';
import { garmentPng } from './helpers/images';
import { failingStartProvider } from './helpers/providers';

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
    const body = {
      toolId: 'photo_edit',
      images: { user_photo: url },
      customPrompt: 'make the background light grey',
    };
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
    expectSuccess(
      await api.generate(
        { toolId: 'remove_background', images: { user_photo: url } },
        { 'Idempotency-Key': key },
      ),
      202,
    );
    const res = await api.generate(
      { toolId: 'photo_enhance', images: { user_photo: url } },
      { 'Idempotency-Key': key },
    );
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

  it('charges once when the same key and body arrive in parallel, and every duplicate gets the same 202', async () => {
    const key = freshKey();
    const body = { toolId: 'amateur_to_pro', images: { user_photo: url } };
    const before = await api.balance();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => api.generate(body, { 'Idempotency-Key': key })),
    );
    for (const r of results) expectSuccess(r, 202);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await api.balance()).toBe(before - 2);
  });

  it('answers 20 parallel duplicates of a request that spends the last diamonds with one 202 and one charge', async () => {
    const poor = await createAccount(srv.dataDir, 3);
    const p = srv.api(poor.apiKey);
    const photo = await p.uploadUrl(await garmentPng());
    const key = freshKey();
    const body = {
      toolId: 'photo_edit',
      images: { user_photo: photo },
      customPrompt: 'brighten the background',
    };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => p.generate(body, { 'Idempotency-Key': key })),
    );
    for (const r of results) expectSuccess(r, 202);
    const ids = new Set(results.map((r) => r.body.id as string));
    expect(ids.size).toBe(1);
    const [jobId] = [...ids];
    expect(await ledgerOf(srv, jobId!)).toEqual([{ kind: 'charge', amount: -3 }]);
    expect(await p.balance()).toBe(0);
    // A retry after the job finished (balance still 0) is the same answer, not a 402.
    expect((await p.waitForJob(jobId!)).status).toBe('completed');
    const late = await p.generate(body, { 'Idempotency-Key': key });
    expectSuccess(late, 202);
    expect(late.body.id).toBe(jobId);
    expect(await ledgerOf(srv, jobId!)).toHaveLength(1);
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
    const mine = await api.generate(
      { toolId: 'remove_background', images: { user_photo: url } },
      { 'Idempotency-Key': key },
    );
    const theirs = await o.generate(
      { toolId: 'remove_background', images: { user_photo: oUrl } },
      { 'Idempotency-Key': key },
    );
    expectSuccess(mine, 202);
    expectSuccess(theirs, 202);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await o.balance()).toBe(9);
    // And the other account cannot read my job through the replay.
    expectError(await o.get(`/v1/generations/${mine.body.id as string}`), 404);
  });
});

describe('POST /v1/catalog-jobs', () => {
  it('answers 20 parallel duplicates at a balance of exactly the shot price with one 202 and one charge', async () => {
    const poor = await createAccount(srv.dataDir, 4);
    const p = srv.api(poor.apiKey);
    const photo = await p.uploadUrl(await garmentPng());
    const sets = await p.get('/v1/ready-template-sets?limit=100');
    const set = (sets.body.templateSets as Json[])[0]!;
    const body = {
      readyTemplateSetId: set.id,
      images: { garment_photo: photo },
      shotIds: [(set.shots as Json[])[0]!.id],
    };
    const key = freshKey();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        p.post('/v1/catalog-jobs', body, { headers: { 'Idempotency-Key': key } }),
      ),
    );
    for (const r of results) expectSuccess(r, 202);
    const ids = new Set(results.map((r) => r.body.mediaItemId as string));
    expect(ids.size).toBe(1);
    expect(await ledgerOf(srv, [...ids][0]!)).toEqual([{ kind: 'charge', amount: -4 }]);
    expect(await p.balance()).toBe(0);
  });

  it('replays the same response for the same key and body and charges once; 409 for a different body', async () => {
    const sets = await api.get('/v1/ready-template-sets?limit=100');
    const set = (sets.body.templateSets as Json[]).find((s) => (s.shotCount as number) >= 2)!;
    const shots = (set.shots as Json[]).map((s) => s.id as string);
    const key = freshKey();
    const body = {
      readyTemplateSetId: set.id,
      images: { garment_photo: url },
      shotIds: shots.slice(0, 1),
    };
    const before = await api.balance();
    const first = await api.post('/v1/catalog-jobs', body, { headers: { 'Idempotency-Key': key } });
    expectSuccess(first, 202);
    const again = await api.post('/v1/catalog-jobs', body, { headers: { 'Idempotency-Key': key } });
    expect(again.status).toBe(202);
    expect(again.body.mediaItemId).toBe(first.body.mediaItemId);
    expect(await api.balance()).toBe(before - 4);
    const different = await api.post(
      '/v1/catalog-jobs',
      { ...body, shotIds: shots.slice(0, 2) },
      { headers: { 'Idempotency-Key': key } },
    );
    expectError(different, 409);
    expect(await api.balance()).toBe(before - 4);
  });
});

describe('POST /v1/uploads', () => {
  it('answers 20 parallel duplicates with one id and stores the upload once', async () => {
    const other = await createAccount(srv.dataDir, 0);
    const o = srv.api(other.apiKey);
    const bytes = await garmentPng(150, 180, '#33aa77');
    const key = freshKey();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => o.upload(bytes, 'image/png', { 'Idempotency-Key': key })),
    );
    for (const r of results) expectSuccess(r, 200);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.url)).size).toBe(1);
    const rows = await coreRows<{ n: number }>(
      srv,
      'SELECT CAST(COUNT(*) AS INTEGER) AS n FROM blobs WHERE account_id = (SELECT id FROM accounts WHERE email = ?)',
      other.email,
    );
    expect(rows[0]!.n).toBe(1);
  });
});

describe('a failure after the charge (500)', () => {
  let bad: TestServer;
  beforeAll(async () => {
    bad = await startTestServer({ provider: failingStartProvider() }, 'idem-500-');
  });
  afterAll(async () => {
    await bad?.close();
  });

  it('refunds exactly once, marks the job failed, and frees the key so a retry with it is a new attempt', async () => {
    const acct2 = await createAccount(bad.dataDir, 3);
    const b = bad.api(acct2.apiKey);
    const photo = await b.uploadUrl(await garmentPng());
    const key = freshKey();
    const body = {
      toolId: 'photo_edit',
      images: { user_photo: photo },
      customPrompt: 'remove the logo',
    };
    const jobsOf = () =>
      coreRows<{ id: string; status: string }>(
        bad,
        'SELECT id, status FROM jobs WHERE account_id = (SELECT id FROM accounts WHERE email = ?)',
        acct2.email,
      );

    expectError(await b.generate(body, { 'Idempotency-Key': key }), 500, 'refunded');
    expect(await b.balance()).toBe(3);
    const [job] = await jobsOf();
    expect(job!.status).toBe('failed');
    expect(await ledgerOf(bad, job!.id)).toEqual([
      { kind: 'charge', amount: -3 },
      { kind: 'refund', amount: 3 },
    ]);
    const polled = await b.get(`/v1/generations/${job!.id}`);
    expect(polled.body).toMatchObject({ status: 'failed', resultUrls: [] });
    expect(typeof polled.body.errorMessage).toBe('string');

    // Retries with the same key, one and then ten at once: never the failed job's 202 replayed,
    // every attempt charged and refunded exactly once, the balance whole.
    expectError(await b.generate(body, { 'Idempotency-Key': key }), 500, 'refunded');
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => b.generate(body, { 'Idempotency-Key': key })),
    );
    for (const r of burst) expectError(r, 500, 'refunded');
    const jobs = await jobsOf();
    expect(jobs.length).toBeGreaterThanOrEqual(3);
    for (const j of jobs) {
      expect(j.status).toBe('failed');
      expect(await ledgerOf(bad, j.id)).toEqual([
        { kind: 'charge', amount: -3 },
        { kind: 'refund', amount: 3 },
      ]);
    }
    expect(await b.balance()).toBe(3);
  });
});
