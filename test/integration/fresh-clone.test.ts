/**
 * The first five minutes on a fresh machine: the committed HEAD cloned into a temporary folder,
 * the machine's own Node first on PATH (Node 20 here, which better-sqlite3 13 cannot run on), an
 * empty npm cache, a new HOME (no ~/.npmrc, no ~/.dropshoot), no Electron or browser download;
 * README's first command, taken from README.md as written, must export the sample batch and leave
 * the clone's work tree clean. It installs from the npm registry, so it takes a minute or more.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');
const SYSTEM_NODE = '/usr/bin/node';

/** The first command of README's first sh block, exactly as written. */
function readmeFirstCommand(readme: string): string {
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  const line = block?.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (!line) throw new Error('README.md has no sh block with a command');
  return line.trim();
}

type Done = { code: number | null; stdout: string; stderr: string; ms: number };
function sh(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<Done> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    // Its own process group, so that nothing it starts outlives the test.
    const child = spawn('bash', ['-c', command], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`timed out after ${timeoutMs} ms: ${command}\n${stderr.slice(-4000)}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGKILL'); // stragglers of the group, if any
      } catch {
        // none left: the usual case
      }
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

const hasSystemNode = fs.existsSync(SYSTEM_NODE);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-fresh-'));
// A whole node_modules and npm cache: removing them can take a while on a busy machine.
afterAll(() => fs.rmSync(root, { recursive: true, force: true }), 10 * 60_000);

describe.skipIf(!hasSystemNode)(
  "README's first command on a fresh clone with the machine's own Node",
  () => {
    it(
      'installs, runs the sample batch, exports decodable files and leaves the work tree clean',
      async () => {
        const clone = path.join(root, 'repo');
        const home = path.join(root, 'home');
        fs.mkdirSync(home);
        // A clean environment: nothing from the npm run that started the tests (its PATH has this
        // repository's node_modules/.bin and Node 22 first, npm_* variables point at this checkout).
        const env: NodeJS.ProcessEnv = {
          PATH: `${path.dirname(SYSTEM_NODE)}:/bin:/usr/sbin:/sbin`,
          HOME: home,
          LANG: 'C.UTF-8',
          TMPDIR: os.tmpdir(),
          npm_config_cache: path.join(root, 'npm-cache'),
          npm_config_update_notifier: 'false',
          ELECTRON_SKIP_BINARY_DOWNLOAD: '1',
          PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
          ...(process.env.CI ? { CI: process.env.CI } : {}),
        };
        const cloned = await sh(
          `git clone --quiet ${JSON.stringify(repo)} ${JSON.stringify(clone)}`,
          root,
          env,
          120_000,
        );
        expect(cloned.code, cloned.stderr).toBe(0);
        const nodeVersion = (await sh('node -v', clone, env, 30_000)).stdout.trim();

        const command = readmeFirstCommand(fs.readFileSync(path.join(clone, 'README.md'), 'utf8'));
        expect(command).toMatch(/^npm install && npx dropshoot run /);
        const ran = await sh(command, clone, env, 20 * 60_000);
        console.log(
          `fresh clone, ${nodeVersion} first on PATH, empty npm cache: \`${command}\` took ${(ran.ms / 1000).toFixed(1)} s`,
        );
        expect(ran.code, `${ran.stdout}\n${ran.stderr.slice(-4000)}`).toBe(0);

        const summary = JSON.parse(ran.stdout.trim().split('\n').at(-1)!) as {
          photos: number;
          exported: number;
          failed: unknown[];
          files: string[];
        };
        const samples = fs
          .readdirSync(path.join(clone, 'resources/samples/photos'))
          .filter((f) => /\.(jpe?g|png|webp)$/i.test(f));
        expect(summary).toMatchObject({
          photos: samples.length,
          exported: samples.length,
          failed: [],
        });
        const exported = fs
          .readdirSync(path.join(clone, 'exports'))
          .map((f) => path.join(clone, 'exports', f));
        expect(exported.sort()).toEqual([...summary.files].sort());
        for (const file of exported) {
          const meta = await sharp(file).metadata();
          expect(meta.format, file).toBe('jpeg'); // the Amazon preset forces JPEG
          expect(Math.max(meta.width ?? 0, meta.height ?? 0), file).toBeGreaterThan(0);
          await sharp(file).raw().toBuffer(); // decodes to the last pixel
        }
        // The batch ran on the Node 22 that npm install provisioned, whatever the machine has.
        expect(fs.existsSync(path.join(clone, 'node_modules/.bin/node'))).toBe(true);

        const status = await sh('git status --porcelain', clone, env, 30_000);
        expect(status.stdout).toBe('');
      },
      25 * 60_000,
    );
  },
);
