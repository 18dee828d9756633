/**
 * Crash safety: jobs accepted by a `serve` process that is killed with SIGKILL are finished (or
 * failed and refunded) by the next process on the same data dir; the ledger ends exactly at
 * start minus the prices of completed jobs, never refunded twice, never stuck in processing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, download, makeTempDir, removeDir, sleep, type Json } from './helpers/api';
import { crashServe, createAccount, spawnServe, stopServe, type Account, type ServeProcess } from './helpers/cli';
import { garmentJpeg, garmentPng, isImage, isMp4 } from './helpers/images';
import { PRICES, type Tool } from './helpers/tools';

let dir: string;
const procs: ServeProcess[] = [];

beforeAll(() => {
  dir = makeTempDir('restart-');
});
afterAll(async () => {
  for (const p of procs) await stopServe(p, 'SIGKILL');
  removeDir(dir);
});

async function pollAll(api: Api, ids: string[], timeoutMs: number): Promise<Map<string, Json>> {
  const out = new Map<string, Json>();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const id of ids) {
      if (out.has(id)) continue;
      const res = await api.get(`/v1/generations/${id}`);
      expect(res.status, res.text).toBe(200);
      if (res.body.status === 'completed' || res.body.status === 'failed') out.set(id, res.body);
    }
    if (out.size === ids.length) return out;
    await sleep(500);
  }
  throw new Error(`jobs still processing after restart: ${ids.filter((id) => !out.has(id)).join(', ')}`);
}

describe('kill -9 and restart on the same data dir', () => {
  it('finishes or refunds every accepted job exactly once after a SIGKILL', async () => {
    const START = 500;
    const first = await spawnServe(dir);
    procs.push(first);
    const acct: Account = await createAccount(dir, START);
    let api = new Api(first.url, acct.apiKey);

    const big = await api.uploadUrl(await garmentJpeg(3000, 4000), 'image/jpeg');
    const small = await api.uploadUrl(await garmentPng(), 'image/png');
    const plan: [Tool, Json][] = [
      ['ai_videos', { toolId: 'ai_videos', images: { user_photo: small }, motionPrompt: 'slow pan', duration: 10 }],
      ['ai_videos', { toolId: 'ai_videos', images: { user_photo: big }, motionPrompt: 'zoom in', duration: 10 }],
      ['photo_enhance', { toolId: 'photo_enhance', images: { user_photo: big } }],
      ['photo_enhance', { toolId: 'photo_enhance', images: { user_photo: big } }],
      ['clothing_ecom_pack', { toolId: 'clothing_ecom_pack', images: { user_photo: big } }],
      ['remove_background', { toolId: 'remove_background', images: { user_photo: small } }],
    ];
    const submitted = await Promise.all(plan.map(([, body]) => api.generate(body)));
    for (const res of submitted) expect(res.status, res.text).toBe(202);
    await crashServe(first); // kill -9 right after the 202s

    const ids = submitted.map((r) => r.body.id as string);
    const second = await spawnServe(dir);
    procs.push(second);
    api = new Api(second.url, acct.apiKey);

    const charged = plan.reduce((acc, [tool]) => acc + PRICES[tool], 0);
    const midway = await api.balance();
    expect(midway).toBeLessThanOrEqual(START);
    expect(midway).toBeGreaterThanOrEqual(START - charged);

    const jobs = await pollAll(api, ids, 150_000);
    let expected = START;
    for (let i = 0; i < ids.length; i++) {
      const job = jobs.get(ids[i]!)!;
      const tool = plan[i]![0];
      if (job.status === 'completed') {
        expected -= PRICES[tool];
        expect((job.resultUrls as string[]).length).toBeGreaterThanOrEqual(1);
        const got = await download((job.resultUrls as string[])[0]!, acct.apiKey);
        expect(got.status).toBe(200);
        expect(tool === 'ai_videos' ? isMp4(got.bytes) : isImage(got.bytes)).toBe(true);
      } else {
        expect(job.resultUrls).toEqual([]);
        expect(typeof job.errorMessage).toBe('string');
      }
    }
    expect(await api.balance()).toBe(expected);

    // A second (clean) restart must not refund or charge anything again, nor change any status.
    await stopServe(second, 'SIGTERM');
    const third = await spawnServe(dir);
    procs.push(third);
    api = new Api(third.url, acct.apiKey);
    await sleep(1500);
    expect(await api.balance()).toBe(expected);
    for (const id of ids) {
      const again = await api.get(`/v1/generations/${id}`);
      expect(again.body.status).toBe(jobs.get(id)!.status);
    }
  }, 200_000);
});
