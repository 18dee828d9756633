/**
 * A real answer of the service that arrives while the engine is stopping is recorded on its item
 * like any other (issue 10): a 402 on a submission, the daily cap's 429 on a submission or a poll.
 * Against the reference /v1 service (written from the spec alone), behind a loopback proxy that
 * holds one request until the engine has begun to stop, then lets the service answer it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import * as store from '../../src/studio/db/store';
import type { Recipe } from '../../src/shared/studio';
import { StudioEngine } from '../../src/studio/engine';
import { startReferenceService, type ReferenceService } from '../reference-service';
import { fileSha256 } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'stop-answers@example.com';
const cutout: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

/**
 * Forwards to `target`; the first request matching a hold waits (not yet forwarded) until the
 * test releases it, so the service answers with its state at the release.
 */
async function holdingProxy(target: string): Promise<{
  url: string;
  hold(method: string, pathRe: RegExp): { arrived: Promise<void>; release: () => void };
  close(): Promise<void>;
}> {
  let pending: {
    method: string;
    pathRe: RegExp;
    arrived: () => void;
    released: Promise<void>;
  } | null = null;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const hold = pending;
        if (hold && req.method === hold.method && hold.pathRe.test(req.url ?? '')) {
          pending = null;
          hold.arrived();
          await hold.released;
        }
        const body = Buffer.concat(chunks);
        const url = new URL(req.url ?? '/', target);
        const headers = { ...req.headers, host: url.host, 'content-length': String(body.length) };
        delete headers.connection;
        const upstream = http.request(url, { method: req.method, headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold(method, pathRe) {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedP = new Promise<void>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      pending = { method, pathRe, arrived, released };
      return { arrived: arrivedP, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function world(diamonds: number): Promise<{
  root: string;
  service: ReferenceService;
  apiKey: string;
  proxy: Awaited<ReturnType<typeof holdingProxy>>;
  photo: string;
}> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-stop-answers-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  // Jobs of 30-60 s: the one job is still running at every poll of this test.
  const service = await startReferenceService({ seed: 5, jobSeconds: [30, 60] });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: EMAIL, diamonds });
  const proxy = await holdingProxy(service.url);
  cleanups.push(() => proxy.close());
  const photo = path.join(root, 'in', 'p0.jpg');
  fs.mkdirSync(path.dirname(photo), { recursive: true });
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#c0503a' } })
    .jpeg()
    .toFile(photo);
  return { root, service, apiKey, proxy, photo };
}

function open(w: Awaited<ReturnType<typeof world>>): { engine: StudioEngine; client: HttpClient } {
  const client = new HttpClient({ baseUrl: w.proxy.url, apiKey: w.apiKey, timeoutMs: 10_000 });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    dailyCap: 100,
    capProbeMs: 60_000,
    balanceRecheckMs: 100,
  });
  return { engine, client };
}

function enqueue(engine: StudioEngine, photo: string): string {
  const batchId = engine.createBatch({
    kind: 'run',
    outputDir: path.join(path.dirname(photo), '..', 'out'),
    autoApprove: true,
  });
  return engine.enqueue({
    batchId,
    sourcePath: photo,
    rootDir: path.dirname(photo),
    sha256: fileSha256(photo),
    recipe: cutout,
  }).id;
}

/** Stops the engine while the held request is at the proxy, then lets the service answer it. */
async function stopDuring(
  engine: StudioEngine,
  held: { arrived: Promise<void>; release: () => void },
  beforeAnswer: () => void = () => undefined,
): Promise<void> {
  await held.arrived;
  const stopped = engine.stop();
  expect(engine.stopping).toBe(true);
  beforeAnswer();
  held.release();
  await stopped;
}

describe('a service answer that arrives while the engine stops', () => {
  it('a 402 on a submission is recorded (short of diamonds, nothing sent), not left as an unanswered charge', async () => {
    const w = await world(0);
    const first = open(w);
    const held = w.proxy.hold('POST', /^\/v1\/generations/);
    first.engine.start();
    const id = enqueue(first.engine, w.photo);
    await stopDuring(first.engine, held);
    const item = store.getItem(first.engine.db, id)!;
    expect(item).toMatchObject({
      state: 'submitting',
      waitReason: 'no_diamonds',
      submittedAt: null,
    });
    expect(item.error).toMatch(/^short of diamonds: /);
    await first.engine.close();
    await first.client.close();

    // Diamonds arrive; the next start submits it again as what it is: refused, never charged
    // (before, it resumed as a lost answer: uncertain, "may have been charged").
    w.service.grant(EMAIL, 10);
    const next = open(w);
    cleanups.push(async () => {
      await next.engine.close();
      await next.client.close();
    });
    next.engine.start();
    const deadline = Date.now() + 20_000;
    while (
      store.getItem(next.engine.db, id)!.state !== 'processing' &&
      store.getItem(next.engine.db, id)!.uncertain === 0 &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 100));
    expect(store.getItem(next.engine.db, id)).toMatchObject({ state: 'processing', uncertain: 0 });
    expect(w.service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(1);
  }, 60_000);

  it("the daily cap's 429 on a submission closes the day on the item", async () => {
    const w = await world(10);
    const { engine, client } = open(w);
    cleanups.push(async () => {
      await engine.close();
      await client.close();
    });
    const held = w.proxy.hold('POST', /^\/v1\/generations/);
    engine.start();
    const id = enqueue(engine, w.photo);
    // The key's cap is reached at the service just before it answers the held submission.
    await stopDuring(engine, held, () =>
      w.service.setDailyCap(w.apiKey, w.service.requestsToday(w.apiKey)),
    );
    const item = store.getItem(engine.db, id)!;
    expect(item).toMatchObject({ state: 'submitting', waitReason: 'daily_cap', submittedAt: null });
    expect(item.error).toMatch(/Daily request cap of \d+ reached/);
    expect(engine.dayClosed()).toBe(true);
    expect(w.service.jobs(EMAIL)).toHaveLength(0);
  }, 60_000);

  it("the daily cap's 429 on a paid job's poll is recorded: the job waits for the day", async () => {
    const w = await world(10);
    const { engine, client } = open(w);
    cleanups.push(async () => {
      await engine.close();
      await client.close();
    });
    const held = w.proxy.hold('GET', /^\/v1\/generations\/[^/]+$/);
    engine.start();
    const id = enqueue(engine, w.photo);
    await stopDuring(engine, held, () =>
      w.service.setDailyCap(w.apiKey, w.service.requestsToday(w.apiKey)),
    );
    const item = store.getItem(engine.db, id)!;
    expect(item.jobId).not.toBeNull();
    expect(item).toMatchObject({ state: 'processing', waitReason: 'daily_cap' });
    expect(item.error).toMatch(/Daily request cap of \d+ reached/);
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
  }, 120_000);
});
