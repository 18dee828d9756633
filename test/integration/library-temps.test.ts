/**
 * The studio library writes through the shared atomic-write helper, so a crash between a temp
 * write and its rename leaves only a temp, and the next start removes it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, expect, it } from 'vitest';
import { Library, type Provenance } from '../../src/studio/library';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const provenance: Provenance = {
  sourceSha256: 'a'.repeat(64),
  sourceName: 'look-042.jpg',
  recipe: {},
  jobId: 'gen_1',
  shotId: null,
  service: 'test',
  diamonds: 1,
  submittedAt: null,
  completedAt: '2026-11-23T00:00:00.000Z',
  downloadedAt: '2026-11-23T00:00:01.000Z',
};

it('removes the temps a killed write left in the library when it opens, and keeps the stored files', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-library-'));
  dirs.push(root);
  // A library as a killed run leaves it (this process has not written there, as after a restart):
  // a stored result, today's hidden temp, and an older build's temp name.
  const shard = path.join(root, 'c3');
  fs.mkdirSync(shard);
  const stored = path.join(shard, `c3${'0'.repeat(62)}.jpg`);
  const hidden = path.join(shard, `.${path.basename(stored)}.0123456789ab.tmp`);
  const older = path.join(shard, `${path.basename(stored)}.4242.k3j9x.tmp`);
  fs.writeFileSync(stored, 'complete');
  fs.writeFileSync(hidden, 'half');
  fs.writeFileSync(older, 'half');

  const reopened = new Library(root);
  await reopened.swept;

  expect(fs.existsSync(hidden)).toBe(false);
  expect(fs.existsSync(older)).toBe(false);
  expect(fs.readdirSync(shard)).toEqual([path.basename(stored)]);
});

it('stores the same bytes twice as one file (a rewrite replaces it whole)', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-library-'));
  dirs.push(root);
  const library = new Library(root);
  const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#3c3' } })
    .png()
    .toBuffer();
  const first = await library.store(png, 'application/octet-stream', provenance);
  const second = await library.store(png, 'application/octet-stream', {
    ...provenance,
    jobId: 'gen_2',
  });
  expect(second.file).toBe(first.file);
  const shardFiles = fs.readdirSync(path.join(root, path.dirname(first.file))).sort();
  expect(shardFiles).toEqual(
    [
      path.basename(first.file),
      path.basename(first.thumb!),
      `${first.sha256}.gen_1.json`,
      `${first.sha256}.gen_2.json`,
    ].sort(),
  );
});
