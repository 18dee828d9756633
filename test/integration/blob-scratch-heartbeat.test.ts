/**
 * The scratch folder's heartbeat (issue 14): a process's folder removed from under it (another
 * process took it for dead, a clean-up) is made again, its copies fetched again when next asked
 * for rather than handed out as paths to missing files; and a heartbeat that cannot write at all
 * logs and carries on instead of throwing in its timer (which would stop serve).
 * The store is the real S3BlobContent against s3rver on loopback.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { S3BlobContent } from '../../src/core/media/blob-content-s3';
import { useScratchStores } from './helpers/s3-scratch-stores';

const BUCKET = 'scratch-heartbeat';
const HEARTBEAT_MS = 40;

describe('scratch heartbeat', () => {
  const scratch = useScratchStores(BUCKET);

  function store(log: string[]) {
    const scratchDir = scratch.scratchDir('scratch-beat-');
    const c = scratch.store({
      dir: scratchDir,
      heartbeatMs: HEARTBEAT_MS,
      log: (m) => log.push(m),
    });
    return { c, scratchDir };
  }

  async function blob(c: S3BlobContent) {
    const data = randomBytes(4096);
    const sha = createHash('sha256').update(data).digest('hex');
    await c.put(sha, data);
    return { data, sha };
  }

  it('a folder removed from under the process: made again, and a copy asked for again is a real file with the content', async () => {
    const log: string[] = [];
    const { c, scratchDir } = store(log);
    const { data, sha } = await blob(c);
    (await c.localCopy(sha)).release();
    expect(c.scratchSize).toBe(data.length);

    fs.rmSync(scratchDir, { recursive: true, force: true });
    await sleep(HEARTBEAT_MS * 4);
    expect(fs.readdirSync(scratchDir)).toHaveLength(1); // the process folder, made again
    expect(c.scratchSize, 'the removed unheld copy is forgotten').toBe(0);

    const copy = await c.localCopy(sha);
    expect(fs.existsSync(copy.path), 'the copy handed out exists').toBe(true);
    expect(fs.readFileSync(copy.path).equals(data)).toBe(true);
    copy.release();
    expect(log).toEqual([]);
  });

  it('a held copy whose file was removed with its folder is fetched again for the next holder', async () => {
    const log: string[] = [];
    const { c, scratchDir } = store(log);
    const { data, sha } = await blob(c);
    const first = await c.localCopy(sha);
    fs.rmSync(scratchDir, { recursive: true, force: true });
    await sleep(HEARTBEAT_MS * 4);
    const second = await c.localCopy(sha);
    expect(fs.readFileSync(second.path).equals(data)).toBe(true);
    expect(c.scratchSize).toBe(data.length);
    first.release();
    second.release();
  });

  it('a heartbeat that cannot make its folder again logs and carries on (no throw in the timer)', async () => {
    const log: string[] = [];
    const { c, scratchDir } = store(log);
    // A file where the scratch folder was: mkdir under it fails (ENOTDIR / EEXIST).
    fs.rmSync(scratchDir, { recursive: true, force: true });
    fs.writeFileSync(scratchDir, 'not a folder');
    await sleep(HEARTBEAT_MS * 4);
    expect(log.length).toBeGreaterThan(0);
    expect(log[0]).toMatch(/^scratch folder /);
    expect(log[0]).toContain('tried again in the next heartbeat');
    // Back to normal once the folder can be made again.
    fs.rmSync(scratchDir, { force: true });
    await sleep(HEARTBEAT_MS * 4);
    const { data, sha } = await blob(c);
    const copy = await c.localCopy(sha);
    expect(fs.readFileSync(copy.path).equals(data)).toBe(true);
    copy.release();
  });
});
