import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { killGroup, REPO_ROOT } from './helpers/cli';

const TSX = path.join(REPO_ROOT, 'node_modules/.bin/tsx');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Opens the event stream and resolves with its status, headers and first chunk. */
function openEvents(url: string): Promise<{ res: http.IncomingMessage; first: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events`, (res) => {
      res.setEncoding('utf8');
      res.once('data', (chunk: string) => resolve({ res, first: chunk }));
    });
    req.on('error', reject);
  });
}

it('sends event-stream headers at once and exits on SIGTERM while a browser tab holds the stream', async () => {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-web-'));
  const child = spawn(TSX, ['src/cli/index.ts', 'studio', '--data', data, '--port', '0'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  cleanups.push(() => {
    if (child.exitCode === null) killGroup(child);
    fs.rmSync(data, { recursive: true, force: true });
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const line = stdout.split('\n').find((l) => l.includes('"studio"'));
      if (line) resolve((JSON.parse(line) as { studio: string }).studio);
    });
    child.on('exit', (code) => reject(new Error(`studio exited early with ${code}`)));
  });

  // Before the fix no byte (not even the headers) came until the first 15 s keep-alive.
  const { res, first } = await openEvents(url);
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('text/event-stream');
  expect(first.startsWith(':')).toBe(true);

  const streamEnded = new Promise<void>((resolve) => res.on('end', () => resolve()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  await streamEnded;
}, 60_000);
