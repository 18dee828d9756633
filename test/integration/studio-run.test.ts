/**
 * The studio engine end to end on real folders, real images, a real studio database and both
 * clients: the embedded core, and `startServer` on loopback through HttpClient.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient, type ServiceClient } from '../../src/client';
import { InProcessClient } from '../../src/client/in-process';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { prepareForUpload } from '../../src/studio/prepare';
import { startServer, type RunningServer } from '../../src/server';
import { openSqliteStore } from '../../src/core/store/sqlite';
import { adminFor } from '../../src/core';
import { systemClock } from '../../src/core/clock';
import type { Recipe } from '../../src/shared/studio';
import { makeHeic } from './helpers/heic';
import { requestBound } from './helpers/poll-bound';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-${name}-`));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function photo(file: string, hue: number): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="800"><rect width="100%" height="100%" fill="#f4f4f2"/><rect x="150" y="160" width="300" height="480" rx="40" fill="hsl(${hue},70%,45%)"/></svg>`;
  await sharp(Buffer.from(svg)).jpeg({ quality: 88 }).toFile(file);
}

const recipe: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{tool}-{n}' },
};

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

async function runOnce(
  client: ServiceClient,
  dataDir: string,
  inDir: string,
  outDir: string,
  extra: { maxDiamonds?: number } = {},
) {
  const engine = new StudioEngine({
    dataDir,
    client,
    prepareUpload: prepareForUpload,
    concurrency: 2,
  });
  try {
    const summary = await runBatch(engine, { inDir, recipe, outDir, ...extra });
    return { ...summary, requestBound: requestBound(engine.db, summary.batchId) };
  } finally {
    await engine.close();
  }
}

describe('studio run (embedded core)', () => {
  it('exports every photo, mirrors subfolders, and a second run spends nothing and writes nothing', async () => {
    const root = tempDir('studio-run');
    const inDir = path.join(root, 'in');
    const outDir = path.join(root, 'out');
    await photo(path.join(inDir, 'look-1.jpg'), 10);
    await photo(path.join(inDir, 'tops', 'look-2.jpg'), 200);
    await photo(path.join(inDir, 'tops', 'look-3.jpg'), 120);
    fs.writeFileSync(path.join(inDir, '.DS_Store'), 'x');
    const dataDir = path.join(root, 'data');
    const client = await InProcessClient.open({ dataDir: path.join(dataDir, 'core') });
    cleanups.push(() => client.close());
    const before = (await client.getAccount()).diamondBalance;

    const first = await runOnce(client, dataDir, inDir, outDir);
    expect(first).toMatchObject({
      photos: 3,
      exported: 3,
      skipped: 0,
      failed: [],
      diamondsSpent: 3,
    });
    const files = filesUnder(outDir).sort();
    expect(files.map((f) => path.relative(outDir, f)).sort()).toEqual(
      [
        'look-1-remove_background-1.png',
        'tops/look-2-remove_background-1.png',
        'tops/look-3-remove_background-1.png',
      ].map((p) => path.join(...p.split('/'))),
    );
    const meta = await sharp(files[0]!).metadata();
    expect(meta.hasAlpha).toBe(true);
    expect((await client.getAccount()).diamondBalance).toBe(before - 3);
    // No runaway polling, on any machine: within upload, create and the poller's most polls for
    // how long each job took (requests per photo as a speed figure: `npm run bench -- requests`).
    expect(first.requestBound.jobs).toBe(3);
    expect(first.apiRequests).toBeLessThanOrEqual(first.requestBound.bound);
    // Sources stay where they are in run mode.
    expect(fs.existsSync(path.join(inDir, 'look-1.jpg'))).toBe(true);

    const second = await runOnce(client, dataDir, inDir, outDir);
    expect(second).toMatchObject({ photos: 3, exported: 0, skipped: 3, diamondsSpent: 0 });
    expect(filesUnder(outDir)).toHaveLength(3);
    expect((await client.getAccount()).diamondBalance).toBe(before - 3);
  });

  it('--max-diamonds: starts no photo past the ceiling, ends the run saying so, and a rerun goes on', async () => {
    const root = tempDir('studio-ceiling');
    const inDir = path.join(root, 'in');
    const outDir = path.join(root, 'out');
    for (let i = 0; i < 5; i++) await photo(path.join(inDir, `p${i}.jpg`), i * 60);
    const dataDir = path.join(root, 'data');
    const client = await InProcessClient.open({ dataDir: path.join(dataDir, 'core') });
    cleanups.push(() => client.close());
    const before = (await client.getAccount()).diamondBalance;

    const capped = await runOnce(client, dataDir, inDir, outDir, { maxDiamonds: 3 });
    expect(capped).toMatchObject({ photos: 5, exported: 3, failed: [], diamondsSpent: 3 });
    expect(capped.held.map((h) => h.name).sort()).toEqual(['p3.jpg', 'p4.jpg']);
    expect(capped.held[0]!.reason).toBe('not started: the batch reached its ceiling of 3 diamonds');
    expect((await client.getAccount()).diamondBalance).toBe(before - 3);

    const rest = await runOnce(client, dataDir, inDir, outDir);
    expect(rest).toMatchObject({ photos: 5, exported: 2, skipped: 3, held: [], diamondsSpent: 2 });
    expect(filesUnder(outDir)).toHaveLength(5);
    expect((await client.getAccount()).diamondBalance).toBe(before - 5);
  });

  it('takes an iPhone HEIC photo like any other: decoded, converted and exported', async () => {
    const root = tempDir('studio-heic');
    const inDir = path.join(root, 'in');
    fs.mkdirSync(inDir, { recursive: true });
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="800"><rect width="100%" height="100%" fill="#f4f4f2"/><rect x="150" y="160" width="300" height="480" rx="40" fill="#2a6fb0"/></svg>';
    fs.writeFileSync(
      path.join(inDir, 'IMG_0001.HEIC'),
      await makeHeic(await sharp(Buffer.from(svg)).png().toBuffer(), { primaries: 12 }),
    );
    const dataDir = path.join(root, 'data');
    const client = await InProcessClient.open({ dataDir: path.join(dataDir, 'core') });
    cleanups.push(() => client.close());
    const summary = await runOnce(client, dataDir, inDir, path.join(root, 'out'));
    expect(summary).toMatchObject({ photos: 1, exported: 1, failed: [] });
    const meta = await sharp(summary.files[0]!).metadata();
    expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', 600, 800, true]);
  });

  it('fails a photo the service rejects without stopping the batch, with the reason', async () => {
    const root = tempDir('studio-bad');
    const inDir = path.join(root, 'in');
    await photo(path.join(inDir, 'good.jpg'), 30);
    fs.mkdirSync(inDir, { recursive: true });
    fs.writeFileSync(path.join(inDir, 'broken.jpg'), Buffer.from('not really a jpeg at all'));
    const dataDir = path.join(root, 'data');
    const client = await InProcessClient.open({ dataDir: path.join(dataDir, 'core') });
    cleanups.push(() => client.close());
    const summary = await runOnce(client, dataDir, inDir, path.join(root, 'out'));
    expect(summary.exported).toBe(1);
    expect(summary.failed).toHaveLength(1);
    expect(summary.failed[0]!.name).toBe('broken.jpg');
    expect(summary.failed[0]!.reason).toMatch(/image/i);
    expect(summary.diamondsSpent).toBe(1);
  });
});

describe('studio run (remote service over HTTP)', () => {
  it('runs the same batch against dropshoot serve on loopback', async () => {
    const root = tempDir('studio-remote');
    const serverData = path.join(root, 'server');
    fs.mkdirSync(serverData);
    const store = openSqliteStore(path.join(serverData, 'core.db'));
    const { apiKey } = await adminFor(store, systemClock).createAccount({
      email: 'studio@example.com',
      diamonds: 10,
    });
    await store.close();
    const server: RunningServer = await startServer({ dataDir: serverData, port: 0 });
    cleanups.push(() => server.close());
    const inDir = path.join(root, 'in');
    await photo(path.join(inDir, 'a.jpg'), 50);
    await photo(path.join(inDir, 'b.jpg'), 250);
    const client = new HttpClient({ baseUrl: server.url, apiKey });
    const summary = await runOnce(client, path.join(root, 'studio'), inDir, path.join(root, 'out'));
    expect(summary).toMatchObject({ photos: 2, exported: 2, diamondsSpent: 2 });
    expect((await client.getAccount()).diamondBalance).toBe(8);
  });
});
