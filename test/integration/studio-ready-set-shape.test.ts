/**
 * A ready shoot's shot count comes from GET /v1/ready-template-sets/{id}, whose body the spec
 * does not show. Against the reference /v1 service answering it in each plausible shape, through
 * `run`'s own path (recipe check, HttpClient, StudioEngine, runBatch): every shape is read, and a
 * set whose shots cannot be read fails its photos saying why instead of leaving them queued.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import { StudioEngine } from '../../src/studio/engine';
import { checkRecipe } from '../../src/studio/recipe-check';
import { runBatch } from '../../src/studio/run-batch';
import { startReferenceService, type ReferenceServiceOptions } from '../reference-service';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { shapePhotos } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'ready-shape@ref.test';
const readyShoot = (id: string): Recipe => ({
  request: { readyTemplateSetId: id, images: { garment_photo: '{photo}' } },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{shot}' },
});

/** A pass-through that answers GET `detail` with the service's body put under `data` (no shape we know). */
async function nestedUnderData(target: string, detail: string): Promise<string> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', target);
    const upstream = http.request(
      url,
      { method: req.method, headers: { ...req.headers, host: url.host } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          let body = Buffer.concat(chunks);
          if (req.method === 'GET' && url.pathname === detail && answer.statusCode === 200) {
            const { success, ...rest } = JSON.parse(body.toString('utf8')) as Record<
              string,
              unknown
            >;
            body = Buffer.from(JSON.stringify({ success, data: rest }));
          }
          const headers = { ...answer.headers, 'content-length': String(body.length) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, headers).end(body);
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One photo through `run`'s path; stopped after 20 s (a photo left queued shows as unfinished). */
async function runOne(
  options: ReferenceServiceOptions,
  recipe: Recipe,
  front?: (target: string) => Promise<string>,
) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-ready-shape-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 4, timeScale: 0.01, ...options });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 200 });
  const inDir = path.join(root, 'in');
  await shapePhotos(inDir, 1);
  const baseUrl = front ? await front(service.url) : service.url;
  const client = new HttpClient({ baseUrl, apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({ dataDir: path.join(root, 'data'), client, apiKey });
  cleanups.push(async () => {
    await engine.close();
    await client.close();
  });
  const problem = await checkRecipe(engine.client, recipe, { transientThrows: true });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('SIGTERM'), 20_000);
  cleanups.push(() => clearTimeout(timer));
  const summary = await runBatch(engine, {
    inDir,
    recipe,
    outDir: path.join(root, 'out'),
    signal: stop.signal,
  });
  const net = service
    .ledger(EMAIL)
    .filter((e) => e.kind !== 'grant')
    .reduce((sum, e) => sum - e.delta, 0);
  return { problem, summary, net };
}

describe('GET /v1/ready-template-sets/{id} in the shapes a service may answer', () => {
  for (const readySetShape of ['templateSet', 'readyTemplateSet', 'flat'] as const) {
    it(`{${readySetShape}}: the shoot is priced, run and paid once`, async () => {
      const { problem, summary, net } = await runOne({ readySetShape }, readyShoot('shoot-04'));
      expect(problem).toBeNull();
      expect(summary.interrupted).toBeUndefined();
      expect(summary.exported).toBe(1);
      expect(summary.notices?.[0]).toMatch(/^1 photo\(s\) to start at about \d+ diamond/);
      expect(summary.diamondsSpent).toBe(net);
      expect(net).toBeGreaterThan(0);
    }, 60_000);
  }

  it('a set that cannot be priced (unknown to the service) fails its photo saying why; nothing hangs or is spent', async () => {
    const { problem, summary, net } = await runOne({}, readyShoot('shoot-unknown'));
    // `run` stops at its recipe check; the engine on its own fails the photo.
    expect(problem).toContain('shoot-unknown');
    expect(summary.interrupted).toBeUndefined();
    expect(summary.failed).toEqual([
      {
        name: 'p00.jpg',
        reason: expect.stringContaining(
          'the shot count of ready shoot shoot-unknown could not be read',
        ),
      },
    ]);
    expect(net).toBe(0);
  }, 60_000);
});

describe('a ready-set body in a shape no reader knows', () => {
  it('run stops at its recipe check saying so; the engine fails the photo with the reason; nothing is spent', async () => {
    const detail = '/v1/ready-template-sets/shoot-04';
    const { problem, summary, net } = await runOne({}, readyShoot('shoot-04'), (target) =>
      nestedUnderData(target, detail),
    );
    expect(problem).toContain(`GET ${detail} answered a body this studio cannot read`);
    expect(summary.interrupted).toBeUndefined();
    expect(summary.failed).toEqual([
      {
        name: 'p00.jpg',
        reason: expect.stringContaining('answered a body this studio cannot read'),
      },
    ]);
    expect(net).toBe(0);
  }, 60_000);
});

describe('a shot count the service keeps failing to give (500)', () => {
  it('is asked again with growing waits, not on every tick', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-ready-500-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const service = await startReferenceService({ seed: 4, timeScale: 0.01 });
    cleanups.push(() => service.close());
    const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 200 });
    const detail = '/v1/ready-template-sets/shoot-04';
    const proxy = await startFaultProxy({
      target: service.url,
      choose: (method, p) => (method === 'GET' && p === detail ? 'error500Before' : null),
    });
    cleanups.push(() => proxy.close());
    const inDir = path.join(root, 'in');
    await shapePhotos(inDir, 1);
    const client = new HttpClient({ baseUrl: proxy.url, apiKey, timeoutMs: 5000 });
    const engine = new StudioEngine({ dataDir: path.join(root, 'data'), client, apiKey });
    cleanups.push(async () => {
      await engine.close();
      await client.close();
    });
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort('SIGTERM'), 6000);
    cleanups.push(() => clearTimeout(timer));
    const summary = await runBatch(engine, {
      inDir,
      recipe: readyShoot('shoot-04'),
      outDir: path.join(root, 'out'),
      signal: stop.signal,
    });
    expect(summary.interrupted?.unfinished).toEqual([{ name: 'p00.jpg', state: 'queued' }]);
    // In 6 s: the batch's own read, then 1, 2 s apart (4 a second before: about 24).
    const asked = proxy.log.filter((e) => e.path === detail).length;
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(asked).toBeLessThanOrEqual(5);
    expect(service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toEqual([]);
  }, 60_000);
});
