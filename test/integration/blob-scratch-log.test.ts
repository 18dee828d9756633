/**
 * The S3 blob store's scratch upkeep reports to the core's log (the process's logger in serve),
 * not to a bare stderr line outside it. The real core on a SQLite file and an s3rver bucket; the
 * scratch folder is made impossible to recreate, and the heartbeat (a minute) is run by a fake
 * setInterval.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openCore } from '../../src/core';
import { makeTempDir, removeDir } from './helpers/api';
import { startTestS3, type TestS3 } from './helpers/s3';

const BUCKET = 'scratch-log';

describe('scratch upkeep warnings', () => {
  let s3: TestS3;
  const dirs: string[] = [];

  beforeAll(async () => {
    s3 = await startTestS3([BUCKET]);
  }, 60_000);
  afterAll(async () => {
    vi.useRealTimers();
    for (const d of dirs) removeDir(d);
    await s3?.close();
  });

  it("go to the core's log", async () => {
    const dataDir = makeTempDir('scratch-log-');
    dirs.push(dataDir);
    const log: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const core = await openCore({
      dataDir,
      blobsUrl: s3.blobsUrl(BUCKET),
      resumeJobs: false,
      log: (m) => log.push(m),
    });
    try {
      // A file where the scratch folder was: the heartbeat cannot make its folder again.
      const scratchDir = path.join(dataDir, 'blob-scratch');
      fs.rmSync(scratchDir, { recursive: true, force: true });
      fs.writeFileSync(scratchDir, 'not a folder');
      vi.advanceTimersByTime(60_000);
      const warnings = log.filter((m) => m.startsWith('scratch folder '));
      expect(warnings, log.join('\n')).toHaveLength(1);
      expect(warnings[0]).toContain('tried again in the next heartbeat');
      const written = stderr.mock.calls.map((c) => String(c[0]));
      expect(written.filter((w) => w.includes('scratch folder '))).toEqual([]);
    } finally {
      vi.useRealTimers();
      stderr.mockRestore();
      fs.rmSync(path.join(dataDir, 'blob-scratch'), { force: true });
      await core.close();
    }
  });
});
