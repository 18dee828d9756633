import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  watchHotFolder,
  type HotFile,
  type HotFileRejection,
  type HotFolderWatch,
} from '../../src/studio/watch/hot-folder';
import { filesUnder } from '../../src/studio/watch/files-under';
import { noisyJpeg } from './helpers/images';

const SETTLE_MS = 200;
let root: string;
let watcher: HotFolderWatch | undefined;
let files: HotFile[];
let rejections: HotFileRejection[];
let errors: Error[];

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-hot-'));
  files = [];
  rejections = [];
  errors = [];
});
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  fs.rmSync(root, { recursive: true, force: true });
});

function start(settleMs = SETTLE_MS, concurrency = 4): HotFolderWatch {
  watcher = watchHotFolder({
    root,
    settleMs,
    concurrency,
    onFile: (file) => {
      files.push(file);
    },
    onError: (error) => errors.push(error),
    onReject: (rejection) => rejections.push(rejection),
  });
  return watcher;
}

const tinyPng = (i: number): Promise<Buffer> =>
  sharp({
    create: {
      width: 4,
      height: 4,
      channels: 3,
      background: { r: i % 256, g: (i >> 8) % 256, b: 7 },
    },
  })
    .png()
    .toBuffer();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('Timed out waiting');
    await sleep(25);
  }
}

describe('hot folder', () => {
  it('waits out a copy that stalls for ten settles, then takes it whole, never rejected', async () => {
    await start().ready;
    const data = await noisyJpeg(600, 400);
    const file = path.join(root, 'stalled.jpg');
    fs.writeFileSync(file, data.subarray(0, data.length >> 1));
    await sleep(10 * SETTLE_MS);
    fs.appendFileSync(file, data.subarray(data.length >> 1));
    await until(() => files.length === 1);
    expect(files[0]).toMatchObject({ name: 'stalled.jpg', size: data.length });
    expect(rejections).toEqual([]);
  });

  it('picks up existing files at start, with subfolders as relativeDir', async () => {
    fs.mkdirSync(path.join(root, 'brand', 'ss27'), { recursive: true });
    fs.writeFileSync(path.join(root, 'top.png'), await tinyPng(1));
    fs.writeFileSync(path.join(root, 'brand', 'ss27', 'deep.png'), await tinyPng(2));
    await start().ready;
    await until(() => files.length === 2);
    const byName = Object.fromEntries(files.map((f) => [f.name, f]));
    expect(byName['top.png']).toMatchObject({ relativeDir: '', format: 'png' });
    expect(byName['deep.png']).toMatchObject({
      relativeDir: 'brand/ss27',
      path: path.join(root, 'brand', 'ss27', 'deep.png'),
    });
    expect(byName['deep.png']?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(errors).toEqual([]);
  });

  it('delivers a file written slowly in chunks once, only after it is complete', async () => {
    await start().ready;
    const data = await noisyJpeg(800, 600);
    const file = path.join(root, 'slow.jpg');
    const fd = fs.openSync(file, 'w');
    const chunks = 10;
    const step = Math.ceil(data.length / chunks);
    for (let i = 0; i < chunks; i++) {
      fs.writeSync(fd, data, i * step, Math.min(step, data.length - i * step));
      await sleep(100); // ~1 s in all; each pause is shorter than the settle interval
      expect(files).toEqual([]);
    }
    fs.closeSync(fd);
    await until(() => files.length === 1);
    expect(files[0]).toMatchObject({ name: 'slow.jpg', size: data.length, format: 'jpeg' });
    expect((await sharp(file).metadata()).width).toBe(800);
    await sleep(SETTLE_MS * 3);
    expect(files).toHaveLength(1);
  });

  it('never delivers a half-written JPEG, present at start or dropped later', async () => {
    const data = await noisyJpeg(600, 400);
    fs.writeFileSync(
      path.join(root, 'before.jpg'),
      data.subarray(0, Math.floor(data.length * 0.6)),
    );
    await start().ready;
    fs.writeFileSync(path.join(root, 'after.jpg'), data.subarray(0, Math.floor(data.length * 0.4)));
    await until(() => rejections.length === 2);
    await sleep(SETTLE_MS * 3);
    expect(files).toEqual([]);
    expect(rejections.map((r) => r.name).sort()).toEqual(['after.jpg', 'before.jpg']);

    // The copy resumes and completes: now it is delivered.
    fs.writeFileSync(path.join(root, 'after.jpg'), data);
    await until(() => files.length === 1);
    expect(files[0]?.name).toBe('after.jpg');
  });

  it('ignores system files, partial downloads and its own done/ and failed/ folders', async () => {
    const png = await tinyPng(3);
    fs.mkdirSync(path.join(root, 'done'), { recursive: true });
    fs.mkdirSync(path.join(root, 'failed', 'sub'), { recursive: true });
    fs.mkdirSync(path.join(root, 'brand', 'done'), { recursive: true });
    for (const name of [
      '.DS_Store',
      'Thumbs.db',
      '~$notes.png',
      'look.png.part',
      'look.png.crdownload',
      'look.tmp',
      '.hidden.png',
      'done/old.png',
      'failed/sub/bad.png',
    ]) {
      fs.writeFileSync(path.join(root, name), png);
    }
    fs.writeFileSync(path.join(root, 'brand', 'done', 'real.png'), png);
    await start().ready;
    await until(() => files.length === 1);
    await sleep(SETTLE_MS * 3);
    expect(files.map((f) => `${f.relativeDir}/${f.name}`)).toEqual(['brand/done/real.png']);
    expect(rejections).toEqual([]);
  });

  it('delivers again only when a file is replaced by different content', async () => {
    const file = path.join(root, 'look.png');
    fs.writeFileSync(file, await tinyPng(10));
    await start().ready;
    await until(() => files.length === 1);
    fs.writeFileSync(file, await tinyPng(10)); // same bytes, new mtime
    await sleep(SETTLE_MS * 4);
    expect(files).toHaveLength(1);
    fs.writeFileSync(file, await tinyPng(11));
    await until(() => files.length === 2);
    expect(files[0]?.sha256).not.toBe(files[1]?.sha256);
  });

  it('delivers 1,000 files dropped at once, each exactly once', async () => {
    await start(SETTLE_MS, 8).ready;
    const pngs = await Promise.all(Array.from({ length: 1000 }, (_, i) => tinyPng(i)));
    fs.mkdirSync(path.join(root, 'batch'));
    await Promise.all(
      pngs.map((png, i) =>
        fs.promises.writeFile(path.join(root, 'batch', `p${String(i).padStart(4, '0')}.png`), png),
      ),
    );
    await until(() => files.length >= 1000, 45_000);
    await sleep(SETTLE_MS * 3);
    expect(files).toHaveLength(1000);
    expect(new Set(files.map((f) => f.path)).size).toBe(1000);
    expect(files.every((f) => f.relativeDir === 'batch')).toBe(true);
    expect(errors).toEqual([]);
  }, 60_000);

  it('stops delivering after close', async () => {
    const w = start();
    await w.ready;
    fs.writeFileSync(path.join(root, 'late.png'), await tinyPng(5));
    await sleep(20);
    await w.close();
    await sleep(SETTLE_MS * 2);
    expect(files).toEqual([]);
  });
});

describe('the walk that finds files the events missed', () => {
  const walk = async (followSymlinks: boolean): Promise<string[]> => {
    const found: string[] = [];
    for await (const file of filesUnder(root, { followSymlinks }))
      found.push(path.relative(root, file));
    return found;
  };

  it('lists every file in name order, leaving out litter, done/ and failed/, and links unless followed', async () => {
    const write = (rel: string): void => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), 'x');
    };
    ['b.jpg', 'a.jpg', 'looks/c.jpg', 'looks/done/d.jpg', 'done/e.jpg', 'failed/f.jpg'].forEach(
      write,
    );
    ['.DS_Store', 'g.jpg.part', 'looks/.hidden/h.jpg'].forEach(write);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-linked-'));
    fs.writeFileSync(path.join(elsewhere, 'i.jpg'), 'x');
    fs.symlinkSync(elsewhere, path.join(root, 'linked'));
    fs.symlinkSync(root, path.join(root, 'looks', 'up')); // a loop

    try {
      expect(await walk(false)).toEqual(['a.jpg', 'b.jpg', 'looks/c.jpg', 'looks/done/d.jpg']);
      expect(await walk(true)).toEqual([
        'a.jpg',
        'b.jpg',
        'linked/i.jpg',
        'looks/c.jpg',
        'looks/done/d.jpg',
      ]);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
