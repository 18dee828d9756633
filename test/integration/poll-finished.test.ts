/**
 * GET /v1/generations/{id} of a finished job: answered from memory as JSON built once (issue 14,
 * the poll path). The cached answer must be the very bytes and headers the store-read answer had,
 * and stay the owner's alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, type Api, type ApiResponse } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount } from './helpers/cli';
import { garmentPng } from './helpers/images';

let srv: TestServer;
let api: Api;
let other: Api;

beforeAll(async () => {
  srv = await startTestServer({}, 'poll-finished-');
  api = srv.api((await createAccount(srv.dataDir, 100)).apiKey);
  other = srv.api((await createAccount(srv.dataDir, 100)).apiKey);
});
afterAll(async () => {
  await srv?.close();
});

/** Polls until the job has finished; the answer of that first poll (read from the store). */
async function firstFinishedPoll(id: string): Promise<ApiResponse> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const res = await api.get(`/v1/generations/${id}`);
    expectSuccess(res, 200);
    if (res.body.status !== 'processing') return res;
    if (Date.now() > deadline) throw new Error(`job ${id} still processing`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('polling a finished job', () => {
  it('answers later polls with the same bytes and headers as the first, and only to its owner', async () => {
    const photo = await api.uploadUrl(await garmentPng(200, 250), 'image/png');
    const id = await api.submit({ toolId: 'amateur_to_pro', images: { user_photo: photo } });
    const first = await firstFinishedPoll(id);
    expect(first.body).toMatchObject({ success: true, id, status: 'completed' });

    for (let i = 0; i < 3; i++) {
      const again = await api.get(`/v1/generations/${id}`);
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(again.headers.get('content-length')).toBe(first.headers.get('content-length'));
    }
    // Another account's key gets the 404 of an unknown id, not the answer kept in memory.
    const stranger = await other.get(`/v1/generations/${id}`);
    expectError(stranger, 404);
    expect(stranger.text).not.toContain(photo);
  });
});
