/** Starts `dropshoot studio` on a data folder (a fresh one, embedded, unless told) for a browser test. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type RunningStudio = { url: string; root: string; stop(): Promise<void> };

/**
 * `root`: a folder the caller keeps (its `data/` survives a stop, for restarts); without it a
 * fresh one is made and removed at stop. `args`: more `studio` flags (`--remote URL --key KEY`).
 * `env`: more environment variables (DROPSHOOT_* providers).
 */
export type StudioOptions = { root?: string; args?: string[]; env?: Record<string, string> };

const repo = path.resolve(import.meta.dirname, '../..');

export async function startStudio(options: StudioOptions = {}): Promise<RunningStudio> {
  const ownsRoot = options.root === undefined;
  const root = options.root ?? fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-e2e-'));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(repo, 'src/cli/index.ts'),
      'studio',
      '--data',
      path.join(root, 'data'),
      '--port',
      '0',
      '--settle-ms',
      '300',
      ...(options.args ?? []),
    ],
    { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...options.env } },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"studio"'));
      if (line) resolve((JSON.parse(line) as { studio: string }).studio);
    });
    child.once('exit', (code) =>
      reject(new Error(`studio exited with ${code} before it was ready`)),
    );
  });
  return {
    url,
    root,
    stop: () =>
      new Promise<void>((done) => {
        child.once('exit', () => {
          if (ownsRoot) fs.rmSync(root, { recursive: true, force: true });
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}
