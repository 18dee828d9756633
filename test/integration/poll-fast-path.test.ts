/**
 * Plain polls (`GET /v1/generations/{id}`, no query string) are answered before Fastify's router
 * (src/server/fast-poll.ts); the same poll with a query string still goes through the route. Both
 * ways must answer every case alike and count against the daily cap alike, and each writes its
 * request line. A request that arrives once close has begun gets a 503 in the spec's shape.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/server/logging';
import { expectSuccess, type Api, type ApiResponse } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, createKey, type Account } from './helpers/cli';
import { garmentPng } from './helpers/images';

let srv: TestServer;
let owner: Account;
let api: Api;
const logLines: string[] = [];

beforeAll(async () => {
  const logger = createLogger({ target: { write: (line: string) => void logLines.push(line) } });
  srv = await startTestServer({ logger }, 'poll-fast-');
  owner = await createAccount(srv.dataDir, 100);
  api = srv.api(owner.apiKey);
});
afterAll(async () => {
  await srv?.close();
});

/** The poll both ways: the plain one (fast) and one with a query string (the router's). */
async function bothWays(client: Api, id: string): Promise<[ApiResponse, ApiResponse]> {
  const fast = await client.get(`/v1/generations/${id}`);
  const routed = await client.get(`/v1/generations/${id}?via=router`);
  return [fast, routed];
}

function expectAlike([fast, routed]: [ApiResponse, ApiResponse], status: number): void {
  expect(fast.status, fast.text).toBe(status);
  expect(routed.status, routed.text).toBe(status);
  expect(fast.text).toBe(routed.text);
  expect(fast.headers.get('content-type')).toBe(routed.headers.get('content-type'));
  expect(fast.headers.get('content-length')).toBe(routed.headers.get('content-length'));
}

async function finishedJob(): Promise<string> {
  const photo = await api.uploadUrl(await garmentPng(120, 150), 'image/png');
  const id = await api.submit({ toolId: 'amateur_to_pro', images: { user_photo: photo } });
  await api.waitForJob(id);
  return id;
}

describe('a plain poll and a routed one', () => {
  it('answer alike: the owner, another account, an unknown id, no key, a wrong key', async () => {
    const id = await finishedJob();
    const own = await bothWays(api, id);
    expectAlike(own, 200);
    expect(own[0].body).toMatchObject({ success: true, id, status: 'completed' });

    const stranger = srv.api((await createAccount(srv.dataDir, 10)).apiKey);
    expectAlike(await bothWays(stranger, id), 404);
    expectAlike(await bothWays(api, 'gen_unknown'), 404);
    expectAlike(await bothWays(api.withAuth(null), id), 401);
    expectAlike(await bothWays(api.withAuth('Bearer sk_wrong'), id), 401);
    // An id the plain way does not take (a dot) reaches the route and is answered like any other.
    const dotted = await api.get(`/v1/generations/gen.unknown`);
    expect(dotted.status).toBe(404);
    expect(dotted.body).toMatchObject({ success: false });
  });

  it('count against the daily cap alike: a cap-2 key gets 429 both ways on its 3rd and 4th poll', async () => {
    const id = await finishedJob();
    const capped = srv.api((await createKey(srv.dataDir, owner.email, 2)).apiKey);
    expectSuccess(await capped.get(`/v1/generations/${id}`), 200);
    expectSuccess(await capped.get(`/v1/generations/${id}?via=router`), 200);
    const refused = await bothWays(capped, id);
    expectAlike(refused, 429);
    expect(refused[0].body.error).toMatch(/2/);
  });

  it('each writes one request line with the id the caller sent', async () => {
    const id = await finishedJob();
    const before = logLines.length;
    for (const [requestId, suffix] of [
      ['plain-poll-1', ''],
      ['routed-poll-1', '?via=router'],
    ] as const) {
      const res = await api.get(`/v1/generations/${id}${suffix}`, {
        headers: { 'x-request-id': requestId },
      });
      expect(res.headers.get('x-request-id')).toBe(requestId);
    }
    const lines = logLines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request');
    expect(lines).toEqual([
      expect.objectContaining({
        requestId: 'plain-poll-1',
        method: 'GET',
        url: `/v1/generations/${id}`,
        status: 200,
        ms: expect.any(Number),
      }),
      expect.objectContaining({
        requestId: 'routed-poll-1',
        url: `/v1/generations/${id}?via=router`,
        status: 200,
      }),
    ]);
    expect(logLines.join('')).not.toContain(owner.apiKey);
  });
});

describe('closing', () => {
  it('answers the request under way, and one that arrives on its connection after close began with a 503 in the spec shape', async () => {
    const closingSrv = await startTestServer({}, 'poll-fast-close-');
    const acct = await createAccount(closingSrv.dataDir, 10);
    const png = await garmentPng(100, 120);
    const { port } = new URL(closingSrv.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const auth = `Authorization: Bearer ${acct.apiKey}\r\n`;
    // An upload under way: its headers and half its body before close begins.
    socket.write(
      `POST /v1/uploads HTTP/1.1\r\nHost: test\r\n${auth}Content-Type: image/png\r\n` +
        `Content-Length: ${png.length}\r\n\r\n`,
    );
    socket.write(png.subarray(0, png.length >> 1));
    await new Promise((r) => setTimeout(r, 300));
    const closed = closingSrv.close();
    await new Promise((r) => setTimeout(r, 300));
    // The rest of the upload, and a poll right behind it on the same connection.
    socket.write(png.subarray(png.length >> 1));
    socket.write(`GET /v1/generations/gen_after HTTP/1.1\r\nHost: test\r\n${auth}\r\n`);
    await ended;
    await closed;

    const answers = received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(answers[0]).toContain('"success":true');
    expect(answers[1]).toMatch(/^HTTP\/1\.1 503 /);
    expect(answers[1]).toMatch(/\r\nconnection: close\r\n/i);
    const body = JSON.parse(answers[1]!.split('\r\n\r\n')[1]!) as unknown;
    expect(body).toEqual({ success: false, error: expect.stringMatching(/shutting down/) });
  });
});
