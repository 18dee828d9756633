/**
 * `dropshoot run` and `generate` as real child processes: the data folder is locked before
 * anything opens in it (a refused second run touches nothing), SIGINT/SIGTERM end a run with its
 * summary at a safe point and the next run finishes the batch without paying twice, and every
 * command shares one data-folder layout (`<data>/core/`), migrating the older `generate` one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/cli';
import { InProcessClient, LOCAL_STARTING_DIAMONDS } from '../../src/client/in-process';

const BIN = path.join(REPO_ROOT, 'bin/dropshoot.mjs');
const RECIPE = path.join(REPO_ROOT, 'resources/samples/recipes/cutout-amazon.json');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-lifecycle-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type Done = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };
type Cli = { child: ChildProcess; done: Promise<Done>; stdout: () => string };

function start(args: string[]): Cli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<Done>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  return { child, done, stdout: () => stdout };
}

const cli = (args: string[]) => start(args).done;
const json = <T>(out: string): T => JSON.parse(out.trim().split('\n').at(-1)!) as T;

/** `dropshoot run` of the photos in `inDir` with the cut-out recipe, exporting into `outDir`. */
function runArgs(inDir: string, outDir: string, dataDir: string, ...more: string[]): string[] {
  return ['run', '--in', inDir, '--recipe', RECIPE, '--out', outDir, '--data', dataDir, ...more];
}

/** `dropshoot generate` of a cut-out of `image`, written next to it or into `outDir`. */
function generateArgs(image: string, dataDir: string, outDir?: string): string[] {
  const args = ['generate', '--tool', 'remove_background', '--image', image, '--data', dataDir];
  return outDir === undefined ? args : [...args, '--out', outDir];
}

async function photo(file: string, hue: number): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="500"><rect width="100%" height="100%" fill="#ffffff"/><rect x="80" y="60" width="240" height="380" rx="30" fill="hsl(${hue},70%,45%)"/></svg>`;
  await sharp(Buffer.from(svg)).jpeg({ quality: 88 }).toFile(file);
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

type Summary = {
  photos: number;
  exported: number;
  skipped: number;
  diamondsSpent: number;
  files: string[];
  interrupted?: { signal: string; unfinished: { name: string; state: string }[] };
};

describe('run: the data folder is locked before anything opens in it', () => {
  it('a second run on a folder in use is refused at once and opens nothing (no core, no queue)', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    fs.mkdirSync(dataDir);
    // A live process holds the folder (as a running `run` or `studio` would).
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], {
      stdio: 'ignore',
    });
    cleanups.push(() => void holder.kill('SIGKILL'));
    fs.writeFileSync(path.join(dataDir, 'studio.lock'), String(holder.pid));

    const res = await cli(
      runArgs(path.join(REPO_ROOT, 'resources/samples/photos'), path.join(root, 'out'), dataDir),
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      `dropshoot: the data folder ${dataDir} is in use by another Dropshoot process (pid ${holder.pid}); let it finish or stop it, or give another --data folder\n`,
    );
    // The embedded core resumes its jobs as it opens: refused first, it never opened.
    expect(fs.readdirSync(dataDir)).toEqual(['studio.lock']);
    expect(fs.readFileSync(path.join(dataDir, 'studio.lock'), 'utf8')).toBe(String(holder.pid));
  });
});

describe('run: SIGINT and SIGTERM', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s ends the run at a safe point with its summary; the next run finishes without paying twice',
    async (signal) => {
      const root = tempDir();
      const inDir = path.join(root, 'in');
      const outDir = path.join(root, 'out');
      const dataDir = path.join(root, 'data');
      const photos = 12;
      for (let i = 0; i < photos; i++)
        await photo(path.join(inDir, `p${String(i).padStart(2, '0')}.jpg`), i * 30);
      const args = runArgs(inDir, outDir, dataDir, '--concurrency', '1');

      const first = start(args);
      await until(() => fs.existsSync(outDir) && fs.readdirSync(outDir).length > 0, 120_000);
      first.child.kill(signal);
      const stopped = await first.done;
      expect(stopped.code, stopped.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(stopped.stderr).toContain(`dropshoot: ${signal}: stopping at a safe point`);
      // Nothing but the CLI's own one-line messages: no stack trace after the summary.
      expect(
        stopped.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('dropshoot: ')),
      ).toEqual([]);
      const summary = json<Summary>(stopped.stdout);
      expect(summary.interrupted?.signal).toBe(signal);
      expect(summary.photos).toBe(photos);
      expect(summary.exported).toBeGreaterThanOrEqual(1);
      expect(summary.exported + summary.interrupted!.unfinished.length).toBe(photos);
      expect(fs.existsSync(path.join(dataDir, 'studio.lock'))).toBe(false);

      const second = await cli(args);
      expect(second.code, second.stderr).toBe(0);
      const rest = json<Summary>(second.stdout);
      expect(rest.exported + rest.skipped).toBe(photos);
      expect(rest.interrupted).toBeUndefined();
      expect(fs.readdirSync(outDir)).toHaveLength(photos);
      // Each photo charged once (remove_background costs 1) across both runs, by the core's own ledger.
      const core = await InProcessClient.open({ dataDir: path.join(dataDir, 'core') });
      try {
        expect((await core.getAccount()).diamondBalance).toBe(LOCAL_STARTING_DIAMONDS - photos);
      } finally {
        await core.close();
      }
    },
    240_000,
  );
});

describe('one data-folder layout for run, studio and generate', () => {
  it('generate uses <data>/core like run (one ledger) and writes next to the photo, or into --out', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const shoot = path.join(root, 'shoot');
    await photo(path.join(shoot, 'tee.jpg'), 0);

    const made = await cli(generateArgs(path.join(shoot, 'tee.jpg'), dataDir));
    expect(made.code, made.stderr).toBe(0);
    const one = json<{ files: string[]; diamondBalance: number }>(made.stdout);
    expect(one.files).toEqual([path.join(shoot, 'tee-remove_background-1.png')]);
    expect((await sharp(one.files[0]!).metadata()).hasAlpha).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'core', 'core.db'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'core.db'))).toBe(false);
    expect(fs.existsSync(path.join(REPO_ROOT, 'out', 'tee-remove_background-1.png'))).toBe(false);

    const ran = await cli(runArgs(shoot, path.join(root, 'exports'), dataDir));
    expect(ran.code, ran.stderr).toBe(0);
    const picked = await cli(
      generateArgs(path.join(shoot, 'tee.jpg'), dataDir, path.join(root, 'picked')),
    );
    const two = json<{ files: string[]; diamondBalance: number }>(picked.stdout);
    expect(two.files).toEqual([path.join(root, 'picked', 'tee-remove_background-1.png')]);
    // run (the photo and its generated neighbour, 1 diamond each) and generate again, on the balance the first generate left.
    expect(json<Summary>(ran.stdout)).toMatchObject({ photos: 2, exported: 2 });
    expect(one.diamondBalance - two.diamondBalance).toBe(2 + 1);
  }, 120_000);

  it('a data folder written by the older generate (<data>/core.db) is moved into <data>/core/, balance and all', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const photos = path.join(root, 'photos');
    const img = path.join(photos, 'tee.jpg');
    await photo(img, 120);
    const first = json<{ diamondBalance: number }>(
      (await cli(generateArgs(img, dataDir, path.join(root, 'cutout')))).stdout,
    );
    // Lay it out as the older generate did: the core's files at the top of the data folder.
    for (const entry of fs.readdirSync(path.join(dataDir, 'core')))
      fs.renameSync(path.join(dataDir, 'core', entry), path.join(dataDir, entry));
    fs.rmdirSync(path.join(dataDir, 'core'));
    expect(fs.existsSync(path.join(dataDir, 'core.db'))).toBe(true);

    const res = await cli(runArgs(photos, path.join(root, 'exports'), dataDir));
    expect(res.code, res.stderr).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'core.db'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'blobs'))).toBe(false);
    expect(fs.readdirSync(path.join(dataDir, 'core')).sort()).toEqual(
      expect.arrayContaining(['blobs', 'core.db']),
    );
    const after = json<{ diamondBalance: number }>(
      (await cli(generateArgs(img, dataDir, path.join(root, 'again')))).stdout,
    );
    // The same ledger went on: the run's photos and this generate were charged to the balance the old layout held.
    expect(after.diamondBalance).toBe(
      first.diamondBalance - json<Summary>(res.stdout).diamondsSpent - 1,
    );
  }, 120_000);

  it('a data folder holding both layouts is refused with the fix, not forked', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const photos = path.join(root, 'photos');
    const img = path.join(photos, 'tee.jpg');
    await photo(img, 240);
    expect((await cli(generateArgs(img, dataDir, path.join(root, 'cutout')))).code).toBe(0);
    fs.copyFileSync(path.join(dataDir, 'core', 'core.db'), path.join(dataDir, 'core.db'));
    for (const args of [
      generateArgs(img, dataDir, path.join(root, 'cutout')),
      runArgs(photos, path.join(root, 'exports'), dataDir),
    ]) {
      const res = await cli(args);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(
        /^dropshoot: .+ holds two service cores, .+; keep one: .+, then run again\n$/,
      );
    }
    expect(fs.existsSync(path.join(dataDir, 'core.db'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'studio.db'))).toBe(false);
  }, 120_000);
});
