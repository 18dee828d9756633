/**
 * What the studio takes as a photo, on the money path: a file still being copied, cut short, or
 * replaced under its name after it was queued is never uploaded and paid for as it is, and
 * `run` refuses an output folder inside the folder it reads (exports would come back as photos).
 * The embedded core charges each job; its balance shows what was paid.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InProcessClient, LOCAL_ACCOUNT_EMAIL } from '../../src/client/in-process';
import { openCore } from '../../src/core';
import { openStudio } from '../../src/studio';
import { StudioEngine } from '../../src/studio/engine';
import { prepareForUpload } from '../../src/studio/prepare';
import { runBatch } from '../../src/studio/run-batch';
import { SOURCE_CHANGED } from '../../src/studio/runner';
import type { Recipe } from '../../src/shared/studio';
import { runCli } from './helpers/cli';
import { call, until } from './helpers/studio-commands';

vi.setConfig({ testTimeout: 120_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const recipe: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};
const START = 50;

async function photoBytes(hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="640"><rect width="100%" height="100%" fill="#f2f2f0"/><rect x="120" y="120" width="240" height="400" rx="30" fill="hsl(${hue},70%,45%)"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 88 }).toBuffer();
}

/** An embedded core whose local account holds START diamonds, and folders to work in. */
async function world() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-intake-'));
  const core = await openCore({ dataDir: path.join(root, 'core'), allowPrivateUrls: true });
  await core.admin.createAccount({
    email: LOCAL_ACCOUNT_EMAIL,
    diamonds: START,
    dailyCap: 100_000,
  });
  const client = await InProcessClient.create(core, true);
  const inDir = path.join(root, 'in');
  const outDir = path.join(root, 'out');
  fs.mkdirSync(inDir);
  cleanups.push(async () => {
    await client.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
  const spent = async () => START - (await client.getAccount()).diamondBalance;
  return { root, client, inDir, outDir, spent };
}

async function runOnce(w: Awaited<ReturnType<typeof world>>) {
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'studio'),
    client: w.client,
    prepareUpload: prepareForUpload,
    concurrency: 2,
  });
  try {
    return await runBatch(engine, { inDir: w.inDir, recipe, outDir: w.outDir });
  } finally {
    await engine.close();
  }
}

/** Writes `bytes` to `file` in `parts` pieces, `gapMs` apart, as a slow copy does. */
async function copySlowly(file: string, bytes: Buffer, parts: number, gapMs: number) {
  const step = Math.ceil(bytes.length / parts);
  for (let at = 0; at < bytes.length; at += step) {
    fs.appendFileSync(file, bytes.subarray(at, at + step));
    await new Promise((r) => setTimeout(r, gapMs));
  }
}

describe('dropshoot run takes a photo only once it is complete', () => {
  it('a photo still being copied when the run starts is paid for once, whole; the next run pays nothing', async () => {
    const w = await world();
    const bytes = await photoBytes(20);
    const copying = copySlowly(path.join(w.inDir, 'slow.jpg'), bytes, 8, 250);
    const first = await runOnce(w);
    await copying;
    expect(first.exported, JSON.stringify(first.failed)).toBe(1);
    const paid = await w.spent();
    expect(paid).toBeGreaterThan(0);
    const second = await runOnce(w);
    expect(second.skipped).toBe(1);
    expect(await w.spent()).toBe(paid);
  });

  it('a photo cut short is reported and not sent: nothing spent, the other photo exported', async () => {
    const w = await world();
    const whole = await photoBytes(200);
    fs.writeFileSync(path.join(w.inDir, 'whole.jpg'), whole);
    fs.writeFileSync(
      path.join(w.inDir, 'half.jpg'),
      (await photoBytes(90)).subarray(0, whole.length >> 1),
    );
    const summary = await runOnce(w);
    expect(summary.photos).toBe(2);
    expect(summary.exported).toBe(1);
    expect(summary.failed).toEqual([
      { name: 'half.jpg', reason: expect.stringMatching(/^not sent, nothing spent: .*incomplete/) },
    ]);
    const oneJob = await w.spent();
    // The whole photo alone was charged: a second run over the whole photo alone pays nothing more.
    fs.rmSync(path.join(w.inDir, 'half.jpg'));
    expect((await runOnce(w)).skipped).toBe(1);
    expect(await w.spent()).toBe(oneJob);
  });

  it('an image in a format not taken (GIF, camera raw) is listed as not sent, not passed over; other files are left alone', async () => {
    const w = await world();
    fs.writeFileSync(path.join(w.inDir, 'tee.jpg'), await photoBytes(120));
    await sharp(await photoBytes(30))
      .gif()
      .toFile(path.join(w.inDir, 'dress.gif'));
    fs.writeFileSync(path.join(w.inDir, 'shoe.CR2'), Buffer.from('raw sensor data'));
    fs.writeFileSync(path.join(w.inDir, 'notes.txt'), 'shoot on Tuesday');
    const summary = await runOnce(w);
    // Before, the GIF and the raw were skipped without a word: 1 photo of 1.
    expect(summary.photos).toBe(3);
    expect(summary.exported).toBe(1);
    expect(summary.failed).toEqual([
      { name: 'dress.gif', reason: expect.stringMatching(/^not sent, nothing spent: GIF is not/) },
      {
        name: 'shoe.CR2',
        reason: expect.stringMatching(/^not sent, nothing spent: camera raw \(CR2\) is not/),
      },
    ]);
    expect(await w.spent()).toBeGreaterThan(0);
  });

  it('follows symlinks to photos and folders, each folder once (a link back up does not loop)', async () => {
    const w = await world();
    const elsewhere = path.join(w.root, 'elsewhere');
    fs.mkdirSync(path.join(elsewhere, 'looks'), { recursive: true });
    fs.writeFileSync(path.join(elsewhere, 'linked.jpg'), await photoBytes(40));
    fs.writeFileSync(path.join(elsewhere, 'looks', 'in-linked-folder.jpg'), await photoBytes(160));
    fs.symlinkSync(path.join(elsewhere, 'linked.jpg'), path.join(w.inDir, 'linked.jpg'));
    fs.symlinkSync(path.join(elsewhere, 'looks'), path.join(w.inDir, 'looks'));
    fs.symlinkSync(w.inDir, path.join(w.inDir, 'back-up'));
    const summary = await runOnce(w);
    expect(summary.photos).toBe(2);
    expect(summary.exported, JSON.stringify(summary.failed)).toBe(2);
  });

  it('refuses --out inside --in before anything is read or spent', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-intake-cli-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const inDir = path.join(root, 'photos');
    fs.mkdirSync(inDir);
    fs.writeFileSync(path.join(inDir, 'a.jpg'), await photoBytes(10));
    const recipeFile = path.join(root, 'recipe.json');
    fs.writeFileSync(recipeFile, JSON.stringify(recipe));
    const res = await runCli([
      'run',
      '--data',
      path.join(root, 'data'),
      '--in',
      inDir,
      '--recipe',
      recipeFile,
      '--out',
      path.join(inDir, 'export'),
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--out .* is inside --in/);
    expect(fs.existsSync(path.join(root, 'data'))).toBe(false);
    expect(fs.existsSync(path.join(inDir, 'export'))).toBe(false);
  });
});

describe('a hot-folder photo replaced under its name while it waits', () => {
  it('is not sent: the new photo is paid for once, and its file stays where it is', async () => {
    const w = await world();
    const studio = await openStudio({
      dataDir: path.join(w.root, 'studio'),
      client: w.client,
      settleMs: 150,
      concurrency: 2,
    });
    cleanups.push(() => studio.close());
    await call(studio, 'folders.add', { path: w.inDir, outputDir: w.outDir, recipe });
    await call(studio, 'queue.pause', { paused: true });
    const file = path.join(w.inDir, 'a.jpg');
    fs.writeFileSync(file, await photoBytes(20));
    await until('the first photo queued', async () => {
      const { items } = await call(studio, 'queue.list', {});
      return items.length === 1 && items[0]!.state === 'queued';
    });
    const replacement = await photoBytes(220);
    fs.writeFileSync(file, replacement);
    await until('the replacement queued', async () => {
      const { items } = await call(studio, 'queue.list', {});
      return items.length === 2;
    });
    await call(studio, 'queue.pause', { paused: false });
    const done = await until('both photos settled', async () => {
      const { items } = await call(studio, 'queue.list', {});
      return items.every((i) => i.state === 'failed' || i.state === 'review') ? items : undefined;
    });
    const [replaced, current] = [...done].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    expect(replaced).toMatchObject({ state: 'failed', error: SOURCE_CHANGED, diamonds: 0 });
    expect(current).toMatchObject({ state: 'review' });
    expect(await w.spent()).toBe(current!.diamonds);
    // The file under that name is the replacement, and it waits for its review in place.
    expect(fs.readFileSync(file).equals(replacement)).toBe(true);
    // The replaced version is gone: nothing to retry, nothing priced for it.
    const ids = [replaced!.id];
    expect(await call(studio, 'queue.retryPrice', { ids })).toEqual({
      charged: 0,
      collected: 0,
      diamonds: 0,
    });
    expect(await call(studio, 'queue.retry', { ids })).toEqual({ changed: 0 });
    expect(await w.spent()).toBe(current!.diamonds);
  });
});
