/**
 * The diamond ledger under load and on failure (spec 3.1, 4.6 rule 5, 7 refund rules): parallel
 * spends never overdraw, failed jobs are refunded exactly once, failure at start answers 500 with
 * the charge refunded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, sleep, type ApiResponse } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, createKey } from './helpers/cli';
import { corruptPng, garmentPng } from './helpers/images';
import { failingStartProvider, flakyProvider } from './helpers/providers';
import { catalogIds } from './helpers/tools';

describe('parallel spending on one account', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({}, 'ledger-');
  });
  afterAll(async () => {
    await srv?.close();
  });

  it('accepts exactly K of 40 parallel virtual_model jobs across 4 keys when the balance pays for K, never going negative', async () => {
    const K = 7;
    const start = 4 * K;
    const acct = await createAccount(srv.dataDir, start);
    const extra = await Promise.all([1, 2, 3].map(() => createKey(srv.dataDir, acct.email)));
    const keys = [acct.apiKey, ...extra.map((k) => k.apiKey)];
    const apis = keys.map((k) => srv.api(k));
    const ids = await catalogIds(apis[0]!);
    const url = await apis[0]!.uploadUrl(await garmentPng(120, 150));
    const body = {
      toolId: 'virtual_model',
      images: { fashion_model: ids.fashionModel, garment_photo: url },
    };

    const results: ApiResponse[] = await Promise.all(
      Array.from({ length: 40 }, (_, i) => apis[i % 4]!.generate(body)),
    );
    const accepted = results.filter((r) => r.status === 202);
    const refused = results.filter((r) => r.status === 402);
    expect(
      results
        .filter((r) => r.status !== 202 && r.status !== 402)
        .map((r) => `${r.status} ${r.text}`),
    ).toEqual([]);
    expect(accepted).toHaveLength(K);
    expect(refused).toHaveLength(40 - K);
    for (const r of refused) expectError(r, 402, 'Insufficient diamonds');
    expect(new Set(accepted.map((r) => r.body.id)).size).toBe(K);

    const right = await apis[1]!.balance();
    expect(right).toBe(start - 4 * K);
    expect(right).toBeGreaterThanOrEqual(0);

    for (const r of accepted)
      expect((await apis[2]!.waitForJob(r.body.id as string)).status).toBe('completed');
    expect(await apis[3]!.balance()).toBe(0);
  });

  it('keeps an exact balance under a mixed parallel burst of different prices', async () => {
    const acct = await createAccount(srv.dataDir, 25);
    const api = srv.api(acct.apiKey);
    const url = await api.uploadUrl(await garmentPng(100, 120));
    const bodies = [
      { toolId: 'photo_edit', images: { user_photo: url }, customPrompt: 'brighter' }, // 3
      { toolId: 'remove_background', images: { user_photo: url } }, // 1
      { toolId: 'photo_reframe', images: { user_photo: url }, targetRatio: '1:1' }, // 2
    ];
    const price = [3, 1, 2];
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => api.generate(bodies[i % 3]!)),
    );
    let spent = 0;
    results.forEach((r, i) => {
      expect([202, 402]).toContain(r.status);
      if (r.status === 202) spent += price[i % 3]!;
    });
    const balance = await api.balance();
    expect(balance).toBe(25 - spent);
    expect(balance).toBeGreaterThanOrEqual(0);
    // No unjustified 402: with demand (60) far above the balance, a leftover of 1+ means every 1-diamond job was
    // accepted, 2+ would mean every 2-diamond job was too (10 + 20 > 25): so at most 1 diamond can remain.
    expect(balance).toBeLessThanOrEqual(1);
  });
});

describe('refunds', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({}, 'refund-');
  });
  afterAll(async () => {
    await srv?.close();
  });

  it('fails a remove_background job on a corrupt PNG and refunds it exactly once', async () => {
    const acct = await createAccount(srv.dataDir, 10);
    const api = srv.api(acct.apiKey);
    const up = await api.upload(corruptPng(), 'image/png');
    expectSuccess(up, 200); // valid signature: the upload itself is accepted
    const id = await api.submit({
      toolId: 'remove_background',
      images: { user_photo: up.body.url },
    });
    // Charged at the create: 9, unless a worker already failed and refunded it (CI rehearsal at
    // 9e7ceca on PostgreSQL: 10 at this read); the refund's once-only is asserted below.
    expect([9, 10]).toContain(await api.balance());
    const job = await api.waitForJob(id);
    expect(job.status).toBe('failed');
    expect(job.resultUrls).toEqual([]);
    expect(typeof job.errorMessage).toBe('string');
    expect((job.errorMessage as string).length).toBeGreaterThan(0);
    expect(await api.balance()).toBe(10);
    // Polling again and waiting must not refund a second time.
    await sleep(500);
    expect((await api.get(`/v1/generations/${id}`)).body.status).toBe('failed');
    expect(await api.balance()).toBe(10);
  });

  it('keeps serving and charging normally after a failed job', async () => {
    const acct = await createAccount(srv.dataDir, 5);
    const api = srv.api(acct.apiKey);
    const url = await api.uploadUrl(await garmentPng());
    const id = await api.submit({ toolId: 'photo_enhance', images: { user_photo: url } });
    expect((await api.waitForJob(id)).status).toBe('completed');
    expect(await api.balance()).toBe(4);
  });

  it('refunds a job whose provider run throws, leaving status failed with an errorMessage', async () => {
    // Failing after a pause keeps the charge visible before the refund.
    const bad = await startTestServer({ provider: flakyProvider(() => true, 1500) }, 'refund-run-');
    try {
      const acct = await createAccount(bad.dataDir, 50);
      const api = bad.api(acct.apiKey);
      const ids = await catalogIds(api);
      const url = await api.uploadUrl(await garmentPng());
      const jobs = [
        await api.submit({
          toolId: 'virtual_model',
          images: { fashion_model: ids.fashionModel, garment_photo: url },
        }),
        await api.submit({ toolId: 'clothing_ecom_pack', images: { user_photo: url } }),
        await api.submit({
          toolId: 'ai_videos',
          images: { user_photo: url },
          motionPrompt: 'turn',
        }),
      ];
      expect(await api.balance()).toBe(50 - 4 - 12 - 20);
      for (const id of jobs) {
        const job = await api.waitForJob(id);
        expect(job.status).toBe('failed');
        expect(job.resultUrls).toEqual([]);
        expect(typeof job.errorMessage).toBe('string');
      }
      expect(await api.balance()).toBe(50);
      await sleep(300);
      expect(await api.balance()).toBe(50);
    } finally {
      await bad.close();
    }
  });

  it('answers 500 when the provider fails at start (after the deduction) and refunds the charge', async () => {
    const bad = await startTestServer({ provider: failingStartProvider() }, 'refund-start-');
    try {
      const acct = await createAccount(bad.dataDir, 30);
      const api = bad.api(acct.apiKey);
      const url = await api.uploadUrl(await garmentPng());
      const res = await api.generate({
        toolId: 'photo_edit',
        images: { user_photo: url },
        customPrompt: 'remove the logo',
      });
      expectError(res, 500);
      expect(await api.balance()).toBe(30);
      // Several in a row: each refunded, never double.
      const more = await Promise.all(
        [1, 2, 3].map(() =>
          api.generate({ toolId: 'remove_background', images: { user_photo: url } }),
        ),
      );
      for (const r of more) expectError(r, 500);
      await sleep(300);
      expect(await api.balance()).toBe(30);
      // The server keeps answering.
      expectSuccess(await api.get('/v1/models'), 200);
    } finally {
      await bad.close();
    }
  });
});
