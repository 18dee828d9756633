/**
 * The scratch copies of a bucket's objects (issue 14): providers read files, so a process on S3
 * copies inputs under `<data>/blob-scratch`. The copies are bounded: past the limit the least
 * recently used are removed, never one held (being read); processes sharing one --data never
 * remove each other's copies, and a dead process's folder is removed by the next one to start.
 * The store is the real S3BlobContent against s3rver on loopback.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCRATCH_STALE_MS, type S3BlobContent } from '../../src/core/media/blob-content-s3';
import { useScratchStores } from './helpers/s3-scratch-stores';

const BUCKET = 'scratch-blobs';
const KIB = 1024;

describe('bounded scratch copies of a bucket', () => {
  const scratch = useScratchStores(BUCKET);

  function store(scratchDir: string, limitBytes: number): S3BlobContent {
    return scratch.store({ dir: scratchDir, limitBytes });
  }

  function scratchDir(): string {
    return scratch.scratchDir('scratch-');
  }

  /** `count` objects of `size` bytes in the bucket; their hashes. */
  async function objects(c: S3BlobContent, count: number, size: number): Promise<string[]> {
    const shas: string[] = [];
    for (let i = 0; i < count; i++) {
      const data = randomBytes(size);
      const sha = createHash('sha256').update(data).digest('hex');
      await c.put(sha, data);
      shas.push(sha);
    }
    return shas;
  }

  /** Bytes of content files under the scratch folder (marks and folders not counted). */
  function bytesOnDisk(dir: string): number {
    let total = 0;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true }))
      if (entry.isFile() && /^[0-9a-f]{64}$/.test(entry.name))
        total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
    return total;
  }

  it('keeps the copies within the limit, removing the least recently used first', async () => {
    const dir = scratchDir();
    const c = store(dir, 30 * KIB);
    const [a, b, d, e, f] = await objects(c, 5, 10 * KIB);
    for (const sha of [a!, b!, d!]) (await c.localCopy(sha)).release();
    expect(bytesOnDisk(dir)).toBe(30 * KIB);
    // a used again: now b is the least recently used.
    const again = await c.localCopy(a!);
    expect(fs.readFileSync(again.path).length).toBe(10 * KIB);
    again.release();
    (await c.localCopy(e!)).release();
    expect(fs.existsSync(c.localPath(b!))).toBe(false);
    for (const sha of [a!, d!, e!]) expect(fs.existsSync(c.localPath(sha))).toBe(true);
    (await c.localCopy(f!)).release();
    expect(fs.existsSync(c.localPath(d!))).toBe(false);
    expect(bytesOnDisk(dir)).toBeLessThanOrEqual(30 * KIB);
    expect(c.scratchSize).toBe(bytesOnDisk(dir));
    // A removed copy is fetched again on demand, whole.
    const back = await c.localCopy(b!);
    expect(createHash('sha256').update(fs.readFileSync(back.path)).digest('hex')).toBe(b);
    back.release();
  });

  it('never removes a copy while it is held, even past the limit; trims it once released', async () => {
    const dir = scratchDir();
    const c = store(dir, 20 * KIB);
    const shas = await objects(c, 5, 10 * KIB);
    const held = await c.localCopy(shas[0]!);
    const alsoHeld = await c.localCopy(shas[1]!);
    for (const sha of shas.slice(2)) (await c.localCopy(sha)).release();
    // The two held copies stay readable; the unheld ones went to keep within the limit.
    expect(fs.readFileSync(held.path).length).toBe(10 * KIB);
    expect(fs.readFileSync(alsoHeld.path).length).toBe(10 * KIB);
    expect(bytesOnDisk(dir)).toBe(20 * KIB);
    // Held twice (two units reading one input): kept until both let go.
    const twice = await c.localCopy(shas[0]!);
    held.release();
    held.release(); // idempotent: the second holder still holds it
    (await c.localCopy(shas[2]!)).release();
    expect(fs.existsSync(twice.path)).toBe(true);
    twice.release();
    alsoHeld.release();
    (await c.localCopy(shas[3]!)).release();
    // Both let go now: the least recently used of them (shas[1], taken before shas[0]'s second use) goes.
    expect(bytesOnDisk(dir)).toBeLessThanOrEqual(20 * KIB);
    expect(fs.existsSync(c.localPath(shas[1]!))).toBe(false);
    expect(fs.existsSync(c.localPath(shas[0]!))).toBe(true);
  });

  it('two processes on one --data keep their own copies; a dead process’s folder goes at the next start, a live one’s never', async () => {
    const dir = scratchDir();
    const first = store(dir, 10 * KIB);
    const [sha] = await objects(first, 1, 10 * KIB);
    const reading = await first.localCopy(sha!);
    // A process that died long ago left its folder behind (its mark untouched for an hour).
    const dead = path.join(dir, 'p-oldhost-4242-deadbeef');
    fs.mkdirSync(path.join(dead, sha!.slice(0, 2)), { recursive: true });
    fs.writeFileSync(path.join(dead, sha!.slice(0, 2), sha!), 'left over');
    fs.writeFileSync(path.join(dead, '.alive'), '');
    const longAgo = new Date(Date.now() - SCRATCH_STALE_MS - 60_000);
    fs.utimesSync(path.join(dead, '.alive'), longAgo, longAgo);

    const second = store(dir, 10 * KIB);
    expect(fs.existsSync(dead)).toBe(false);
    // The live first process's copy, being read, is untouched by the second's start and use.
    expect(fs.readFileSync(reading.path).length).toBe(10 * KIB);
    const theirs = await second.localCopy(sha!);
    expect(theirs.path).not.toBe(reading.path);
    theirs.release();
    const [other] = await objects(second, 1, 10 * KIB);
    (await second.localCopy(other!)).release();
    expect(fs.readFileSync(reading.path).length).toBe(10 * KIB);
    reading.release();

    // A clean stop removes the process's own folder, and only that.
    await scratch.close(second);
    expect(fs.existsSync(path.dirname(path.dirname(theirs.path)))).toBe(false);
    expect(fs.existsSync(reading.path)).toBe(true);
  });

  it('a failed download holds nothing and is tried again by the next caller', async () => {
    const c = store(scratchDir(), 10 * KIB);
    const missing = 'f'.repeat(64);
    await expect(c.localCopy(missing)).rejects.toThrow(/not in the store/);
    expect(c.scratchSize).toBe(0);
    const data = randomBytes(KIB);
    const sha = createHash('sha256').update(data).digest('hex');
    await expect(c.localCopy(sha)).rejects.toThrow(/not in the store/);
    await c.put(sha, data);
    const copy = await c.localCopy(sha);
    expect(fs.readFileSync(copy.path).equals(data)).toBe(true);
    copy.release();
  });
});
