/**
 * An export onto a full disk (a real 256 KiB tmpfs, filled up): the photo's reason says what
 * happened and what to do (the folder, that the result is paid for and kept in the library, that
 * the next run or a Retry writes it at no charge), in the words `run`'s summary and the studio
 * show (the item's error). Freed, the next run writes it without paying again. Needs root for
 * mount(8); skipped elsewhere.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ItemView } from '../../src/shared/studio';
import { referenceWorld, runOnWorld, studioOnWorld } from './helpers/reference-studio';
import { call, until } from './helpers/studio-commands';

vi.setConfig({ testTimeout: 120_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A tmpfs of `size` mounted on a new folder, or null where mounting is not allowed. */
function smallDisk(size: string): string | null {
  const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mountPoint], {
      stdio: 'ignore',
    });
  } catch {
    fs.rmdirSync(mountPoint);
    return null;
  }
  cleanups.push(() => {
    execFileSync('umount', [mountPoint]);
    fs.rmdirSync(mountPoint);
  });
  return mountPoint;
}

/** Writes zeros to `file` until the file system is full. */
function fillUp(file: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(16 * 1024));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether a tmpfs can be mounted here (root, mount allowed): mounted and taken down at once. */
function canMount(): boolean {
  const probe = smallDisk('64k');
  if (!probe) return false;
  execFileSync('umount', [probe]);
  fs.rmdirSync(probe);
  cleanups.pop();
  return true;
}

const mountable = canMount();
if (!mountable) console.log('full-disk export skipped: cannot mount a tmpfs here (needs root)');

describe.skipIf(!mountable)('an export onto a full disk', () => {
  it('says which folder is full, that the result is paid and kept, and the next run writes it free', async () => {
    const disk = smallDisk('256k');
    const email = 'full@example.com';
    const w = await referenceWorld(cleanups, {
      email,
      diamonds: 100,
      service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 20] },
    });
    const outDir = path.join(disk!, 'out');
    fs.mkdirSync(outDir);
    const filler = path.join(disk!, 'filler.bin');
    fillUp(filler);

    const first = await runOnWorld(w, { folders: { inDir: w.inDir, outDir } });
    expect(first.exported).toBe(0);
    expect(first.failed).toHaveLength(1);
    const reason = first.failed[0]!.reason;
    expect(reason).not.toMatch(/^ENOSPC/);
    expect(reason).toContain(outDir);
    expect(reason).toMatch(/disk .*is full/);
    expect(reason).toMatch(/paid for and kept in the studio library/);
    expect(reason).toMatch(/free some space.*run again.*Retry.*no charge/);
    expect(w.service.jobs(email)).toHaveLength(1);
    const spent = 100 - w.service.balance(email);
    expect(spent).toBeGreaterThan(0);
    // Nothing half-written is left behind in the export folder.
    expect(fs.readdirSync(outDir)).toEqual([]);

    fs.rmSync(filler);
    const second = await runOnWorld(w, { folders: { inDir: w.inDir, outDir } });
    expect(second.failed).toEqual([]);
    expect(second.exported).toBe(1);
    expect(fs.readdirSync(outDir)).toEqual(['p0-1.png']);
    expect(w.service.jobs(email)).toHaveLength(1);
    expect(100 - w.service.balance(email)).toBe(spent);
  });

  it('the studio shows the same words, and its Retry writes the result without paying again', async () => {
    const email = 'full-studio@example.com';
    const w = await referenceWorld(cleanups, {
      email,
      diamonds: 100,
      service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 20] },
    });
    const disk = smallDisk('256k');
    const outDir = path.join(disk!, 'out');
    fs.mkdirSync(outDir);
    const filler = path.join(disk!, 'filler.bin');
    fillUp(filler);
    const first = await runOnWorld(w, { folders: { inDir: w.inDir, outDir } });
    const spent = 100 - w.service.balance(email);

    const studio = await studioOnWorld(w, cleanups);
    const items = async () => (await call(studio, 'queue.list', { limit: 50 })).items as ItemView[];
    const [failed] = await items();
    expect(failed!.state).toBe('failed');
    expect(failed!.error).toBe(first.failed[0]!.reason);
    expect(failed!.error).toMatch(/is full \(ENOSPC\)/);
    expect(await call(studio, 'queue.retryPrice', { ids: [failed!.id] })).toMatchObject({
      charged: 0,
      diamonds: 0,
    });

    fs.rmSync(filler);
    expect(await call(studio, 'queue.retry', { ids: [failed!.id] })).toEqual({ changed: 1 });
    await until('the result exported', async () => (await items())[0]!.state === 'exported');
    expect(fs.readdirSync(outDir)).toEqual(['p0-1.png']);
    expect(w.service.jobs(email)).toHaveLength(1);
    expect(100 - w.service.balance(email)).toBe(spent);
  });
});
