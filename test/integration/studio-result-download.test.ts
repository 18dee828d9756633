/**
 * A result URL that a CDN or object store no longer serves may answer 200 with its error page (an
 * expired link's HTML) or 400 saying it expired, not only 403: each is taken as a dead URL, and the
 * job is asked once for a fresh one. Real studio database, real HTTP client, a loopback service.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import * as store from '../../src/studio/db/store';
import { StudioEngine } from '../../src/studio/engine';
import { downloadResult } from '../../src/studio/result-download';
import { CUTOUT_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A service whose stored result URL answers `stale` and whose job hands out a working one. */
async function service(png: Buffer, stale: { status: number; type: string; body: string }) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.url === '/v1/generations/job_1')
      return res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          success: true,
          id: 'job_1',
          status: 'completed',
          resultUrls: [`${base}/r/fresh`],
        }),
      );
    if (req.url?.startsWith('/r/stale'))
      return res.writeHead(stale.status, { 'content-type': stale.type }).end(stale.body);
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(png);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function collectOnce(
  stale: { status: number; type: string; body: string },
  staleUrl = '/r/stale',
) {
  const png = await sharp({
    create: { width: 8, height: 8, channels: 3, background: { r: 9, g: 8, b: 7 } },
  })
    .png()
    .toBuffer();
  const svc = await service(png, stale);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-result-download-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const client = new HttpClient({ baseUrl: svc.url, apiKey: 'sk_test' });
  const engine = new StudioEngine({ dataDir: path.join(root, 'data'), client, apiKey: 'sk_test' });
  cleanups.push(() => engine.close());
  const batchId = engine.createBatch({ kind: 'folder', outputDir: root, autoApprove: true });
  const { id } = engine.enqueue({
    batchId,
    sourcePath: path.join(root, 'p.jpg'),
    rootDir: root,
    sha256: 'a'.repeat(64),
    recipe: CUTOUT_RECIPE,
  });
  // Paid and completed: its one result URL stored, as the poll left it.
  store.updateItem(
    engine.db,
    id,
    {
      jobId: 'job_1',
      jobStatus: 'completed',
      state: 'downloading',
      resultUrls: JSON.stringify([`${svc.url}${staleUrl}`]),
    },
    new Date(),
  );
  const got = await downloadResult(
    { db: engine.db, client, now: () => new Date() },
    store.getItem(engine.db, id)!,
    0,
  ).catch((err: unknown) => err as Error);
  return { got, png, svc, stored: store.getItem(engine.db, id)!.resultUrls };
}

it('takes an error page served as 200 for a dead URL: one poll, the fresh URL stored and downloaded', async () => {
  const { got, png, svc, stored } = await collectOnce({
    status: 200,
    type: 'text/html',
    body: '<!DOCTYPE html><html><body>This link has expired</body></html>',
  });
  expect(!(got instanceof Error) && got.data.equals(png)).toBe(true);
  expect(svc.seen).toEqual(['GET /r/stale', 'GET /v1/generations/job_1', 'GET /r/fresh']);
  expect(stored).toBe(JSON.stringify([`${svc.url}/r/fresh`]));
});

it('takes a 400 that says the URL expired (an object store) for a dead URL', async () => {
  const { got, png, svc } = await collectOnce({
    status: 400,
    type: 'application/xml',
    body: '<Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>',
  });
  expect(!(got instanceof Error) && got.data.equals(png)).toBe(true);
  // Refused with the key, the file of the service's own origin is asked once more without it (an
  // object store may refuse a second credential, review rev14 F1); still expired, a fresh poll.
  expect(svc.seen).toEqual([
    'GET /r/stale',
    'GET /r/stale',
    'GET /v1/generations/job_1',
    'GET /r/fresh',
  ]);
});

it('takes a 400 that says nothing of expiry for an answer, even on a URL that carries Expires=', async () => {
  const { got, svc } = await collectOnce(
    { status: 400, type: 'text/plain', body: 'Bad Request' },
    '/r/stale?Expires=1795718828&Signature=abc',
  );
  expect(got).toBeInstanceOf(Error);
  expect(svc.seen).toEqual(['GET /r/stale?Expires=1795718828&Signature=abc']);
});
