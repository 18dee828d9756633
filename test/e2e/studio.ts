/** Starts `dropshoot studio` on a fresh data folder (embedded default) for a browser test. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type RunningStudio = { url: string; root: string; stop(): Promise<void> };

const repo = path.resolve(import.meta.dirname, '../..');

export async function startStudio(): Promise<RunningStudio> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-e2e-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(repo, 'src/cli/index.ts'), 'studio', '--data', path.join(root, 'data'), '--port', '0', '--settle-ms', '300'],
    { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"studio"'));
      if (line) resolve((JSON.parse(line) as { studio: string }).studio);
    });
    child.once('exit', (code) => reject(new Error(`studio exited with ${code} before it was ready`)));
  });
  return {
    url,
    root,
    stop: () =>
      new Promise<void>((done) => {
        child.once('exit', () => {
          fs.rmSync(root, { recursive: true, force: true });
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}
