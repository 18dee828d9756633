/**
 * Disk use is paid for: images fetched from caller URLs are kept only for accepted requests
 * (never for refused ones or for template-set validation), each account's stored images are
 * bounded (413, nothing charged), and files no row names are collected at start-up.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectError,
  expectSuccess,
  makeTempDir,
  removeDir,
  startHost,
  type Api,
} from './helpers/api';
import { createAccount } from './helpers/cli';
import { garmentJpeg, garmentPng } from './helpers/images';
import { storedBlobs } from './helpers/core-storage';
import { startTestServer, type TestServer } from './helpers/server';
import { openCore } from '../../src/core';

/** Files and bytes under a core's blob store (a data folder's own `blobs/`). */
function storeOf(dataDir: string): { files: number; bytes: number } {
  const root = path.join(dataDir, 'blobs');
  let files = 0;
  let bytes = 0;
  for (const dir of fs.existsSync(root) ? fs.readdirSync(root) : []) {
    for (const name of fs.readdirSync(path.join(root, dir))) {
      files++;
      bytes += fs.statSync(path.join(root, dir, name)).size;
    }
  }
  return { files, bytes };
}

let host: { url: string; close(): Promise<void> };
let big: Buffer;
let other: Buffer;

beforeAll(async () => {
  big = await garmentJpeg(2000, 2500, '#227733');
  other = await garmentJpeg(1800, 2200, '#772233');
  host = await startHost((req, res) => {
    const body = req.url === '/big.jpg' ? big : req.url === '/other.jpg' ? other : undefined;
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(body.length) });
    res.end(body);
  });
});
afterAll(async () => {
  await host?.close();
});

describe('fetched images of refused requests', () => {
  let srv: TestServer;
  let api: Api;
  let broke: Api;
  beforeAll(async () => {
    srv = await startTestServer({ allowPrivateUrls: true }, 'storage-');
    api = srv.api((await createAccount(srv.dataDir, 100)).apiKey);
    broke = srv.api((await createAccount(srv.dataDir, 0)).apiKey);
  });
  afterAll(async () => {
    await srv?.close();
  });

  it('stores nothing for a request refused after its first image was fetched', async () => {
    const before = await storedBlobs(srv);
    const res = await api.generate({
      toolId: 'outfit_photo',
      images: {
        fashion_model: `${host.url}/big.jpg`,
        garment_photos: [`${host.url}/other.jpg`, `${host.url}/missing.jpg`],
      },
    });
    expectError(res, 400, 'garment_photos');
    expect(await api.balance()).toBe(100);
    expect(await storedBlobs(srv)).toEqual(before);
  });

  it('stores nothing when a 0-diamond account saves template sets with image URLs', async () => {
    const before = await storedBlobs(srv);
    for (let i = 0; i < 3; i++) {
      const res = await broke.post('/v1/template-sets', {
        label: `look ${i}`,
        toolId: 'virtual_model',
        images: { fashion_model: `${host.url}/big.jpg`, venue: `${host.url}/other.jpg` },
      });
      expectSuccess(res, 201);
    }
    expect(await storedBlobs(srv)).toEqual(before);
    // A bad URL is still refused: the check fetched it.
    expectError(
      await broke.post('/v1/template-sets', {
        label: 'bad',
        toolId: 'virtual_model',
        images: { fashion_model: `${host.url}/missing.jpg` },
      }),
      400,
    );
  });

  it('keeps the fetched image of an accepted request, once, and the job uses it', async () => {
    const before = await storedBlobs(srv);
    const id = await api.submit({
      toolId: 'remove_background',
      images: { user_photo: `${host.url}/big.jpg` },
    });
    const after = await storedBlobs(srv);
    expect(after.files).toBe(before.files + 1);
    expect(after.bytes).toBe(before.bytes + big.length);
    expect((await api.waitForJob(id, 90_000)).status).toBe('completed');
  });
});

describe('per-account storage bound', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(
      { allowPrivateUrls: true, storageQuotaBytes: big.length + Math.floor(other.length / 2) },
      'quota-',
    );
  });
  afterAll(async () => {
    await srv?.close();
  });

  it('refuses an upload past the bound with 413 and a clear message; the same bytes again cost nothing', async () => {
    const api = srv.api((await createAccount(srv.dataDir, 50)).apiKey);
    expectSuccess(await api.upload(big, 'image/jpeg'), 200);
    expectSuccess(await api.upload(big, 'image/jpeg'), 200); // same content: no new storage
    const before = await storedBlobs(srv);
    expectError(await api.upload(other, 'image/jpeg'), 413, 'storage limit');
    expect(await storedBlobs(srv)).toEqual(before);
    // Another account has its own bound.
    const second = srv.api((await createAccount(srv.dataDir, 0)).apiKey);
    expectSuccess(await second.upload(other, 'image/jpeg'), 200);
  });

  it('refuses a generation whose fetched image would pass the bound with 413, charging nothing', async () => {
    const api = srv.api((await createAccount(srv.dataDir, 50)).apiKey);
    await api.uploadUrl(big, 'image/jpeg');
    const before = await storedBlobs(srv);
    expectError(
      await api.generate({
        toolId: 'remove_background',
        images: { user_photo: `${host.url}/other.jpg` },
      }),
      413,
      'storage limit',
    );
    expect(await api.balance()).toBe(50);
    expect(await storedBlobs(srv)).toEqual(before);
    // An image it already holds costs no storage: accepted.
    expectSuccess(
      await api.generate({
        toolId: 'remove_background',
        images: { user_photo: `${host.url}/big.jpg` },
      }),
      202,
    );
  });
});

describe('orphans at start-up', () => {
  it('removes files no row names and temp files a crash left, and keeps every recorded file', async () => {
    const dataDir = makeTempDir('orphans-');
    try {
      let core = await openCore({ dataDir, resumeJobs: false });
      const { apiKey } = await core.admin.createAccount({
        email: 'orphans@example.test',
        diamonds: 0,
      });
      const upload = await core.service.upload(`Bearer ${apiKey}`, await garmentPng());
      expect(upload.status).toBe(200);
      await core.close();
      const kept = storeOf(dataDir);
      expect(kept.files).toBe(1);

      const orphan = path.join(dataDir, 'blobs', 'ab', 'ab'.padEnd(64, '0'));
      const temp = path.join(dataDir, 'blobs', 'ab', `${'ab'.padEnd(64, '1')}.123.456.tmp`);
      const fresh = path.join(dataDir, 'blobs', 'cd', 'cd'.padEnd(64, '2'));
      fs.mkdirSync(path.dirname(orphan), { recursive: true });
      fs.mkdirSync(path.dirname(fresh), { recursive: true });
      fs.writeFileSync(orphan, Buffer.alloc(100_000, 1));
      fs.writeFileSync(temp, Buffer.alloc(50_000, 2));
      fs.writeFileSync(fresh, Buffer.alloc(10, 3));
      const hoursAgo = new Date(Date.now() - 3 * 60 * 60_000);
      fs.utimesSync(orphan, hoursAgo, hoursAgo);
      fs.utimesSync(temp, hoursAgo, hoursAgo);

      core = await openCore({ dataDir, resumeJobs: false });
      await core.close();
      expect(fs.existsSync(orphan)).toBe(false);
      expect(fs.existsSync(temp)).toBe(false);
      // Written moments ago: possibly a request of another process between its write and its row.
      expect(fs.existsSync(fresh)).toBe(true);
      fs.rmSync(fresh);
      expect(storeOf(dataDir)).toEqual(kept);
    } finally {
      removeDir(dataDir);
    }
  });
});
