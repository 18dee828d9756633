/**
 * Drives the real `dropshoot` CLI (`node --import tsx src/cli/index.ts ...`) as a child process, the way an
 * operator would. Admin helpers parse the single JSON line the CLI prints on stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = 'src/cli/index.ts';
/**
 * `node --import tsx` makes the spawned process the CLI itself, so a signal reaches the server: the
 * `tsx` wrapper relays SIGTERM but SIGKILLs its child when a busy event loop answers late, which
 * turned a clean stop into a crash.
 */
const NODE_WITH_TSX = [process.execPath, '--import', 'tsx', CLI] as const;

export type CliResult = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
};

export function runCli(args: string[], timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_WITH_TSX[0], [...NODE_WITH_TSX.slice(1), ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      killGroup(child);
      reject(new Error(`CLI timed out after ${timeoutMs} ms: ${args.join(' ')}\n${stderr}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs a CLI command that must succeed and print exactly one JSON line on stdout. */
export async function cliJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const res = await runCli(args);
  if (res.code !== 0) {
    throw new Error(
      `CLI failed (exit ${res.code}): ${args.join(' ')}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`,
    );
  }
  const lines = res.stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1)
    throw new Error(`CLI printed ${lines.length} lines, expected one JSON line: ${res.stdout}`);
  return JSON.parse(lines[0]!) as T;
}

let emailCounter = 0;
export function uniqueEmail(tag = 'user'): string {
  emailCounter += 1;
  return `${tag}-${process.pid}-${Date.now().toString(36)}-${emailCounter}@example.test`;
}

export type Account = { email: string; apiKey: string; keyId: string };
export type Key = { apiKey: string; keyId: string };

export async function createAccount(
  dataDir: string,
  diamonds: number,
  email = uniqueEmail(),
): Promise<Account> {
  const out = await cliJson<Account>([
    'admin',
    'create-account',
    '--data',
    dataDir,
    '--email',
    email,
    '--diamonds',
    String(diamonds),
  ]);
  return out;
}

/** An account made with `admin --database` (team mode needs no --data), with its row id. */
export async function createTeamAccount(
  db: Pick<pg.Pool, 'query'>,
  databaseUrl: string,
  diamonds: number,
  tag: string,
): Promise<{ email: string; apiKey: string; id: string }> {
  const email = uniqueEmail(tag);
  const made = await cliJson<{ apiKey: string }>([
    'admin',
    'create-account',
    '--database',
    databaseUrl,
    '--email',
    email,
    '--diamonds',
    String(diamonds),
  ]);
  const { rows } = await db.query<{ id: string }>('SELECT id FROM accounts WHERE email = $1', [
    email,
  ]);
  return { email, apiKey: made.apiKey, id: rows[0]!.id };
}

export async function createKey(dataDir: string, email: string, dailyCap?: number): Promise<Key> {
  const args = ['admin', 'create-key', '--data', dataDir, '--email', email];
  if (dailyCap !== undefined) args.push('--daily-cap', String(dailyCap));
  return cliJson<Key>(args);
}

export async function revokeKey(dataDir: string, keyId: string): Promise<{ revoked: boolean }> {
  return cliJson<{ revoked: boolean }>([
    'admin',
    'revoke-key',
    '--data',
    dataDir,
    '--key-id',
    keyId,
  ]);
}

export async function grant(
  dataDir: string,
  email: string,
  diamonds: number,
): Promise<{ diamondBalance: number }> {
  return cliJson<{ diamondBalance: number }>([
    'admin',
    'grant',
    '--data',
    dataDir,
    '--email',
    email,
    '--diamonds',
    String(diamonds),
  ]);
}

export type ServeProcess = {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** Spawns `serve --port 0 --data DIR` and waits for its `{"listening": URL}` line. */
export function spawnServe(
  dataDir: string,
  extra: string[] = [],
  timeoutMs = 30_000,
): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    // A process group of our own lets a test SIGKILL the server and anything it started at once.
    const child = spawn(
      NODE_WITH_TSX[0],
      [
        ...NODE_WITH_TSX.slice(1),
        'serve',
        '--port',
        '0',
        '--data',
        dataDir,
        '--host',
        '127.0.0.1',
        ...extra,
      ],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let stdout = '';
    let stderr = '';
    let done = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
      child.on('exit', (code, signal) => res({ code, signal }));
    });
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      killGroup(child);
      reject(
        new Error(
          `serve did not print {"listening"} within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (done) return;
      const line = stdout.split('\n').find((l) => l.includes('"listening"'));
      if (!line) return;
      done = true;
      clearTimeout(timer);
      try {
        const { listening } = JSON.parse(line) as { listening: string };
        resolve({ url: listening, child, stderr: () => stderr, exited });
      } catch (err) {
        killGroup(child);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    void exited.then(({ code, signal }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(
        new Error(
          `serve exited early (code ${code}, signal ${signal})\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    });
  });
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILLs the whole process group of a spawned `serve`, by its id. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** kill -9 of the server: the group dies at once; resolves when no process of it is left. */
export async function crashServe(proc: ServeProcess): Promise<void> {
  killGroup(proc.child);
  await proc.exited;
  const pgid = proc.child.pid!;
  const deadline = Date.now() + 10_000;
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (groupAlive(pgid)) throw new Error(`server process group ${pgid} survived SIGKILL`);
}

/** Stops a spawned server that this test started: SIGTERM to it, SIGKILL to the group on timeout. */
export async function stopServe(
  proc: ServeProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (signal === 'SIGKILL') return crashServe(proc);
  if (proc.child.exitCode === null && proc.child.signalCode === null) {
    proc.child.kill(signal);
    const timeout = new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), 10_000));
    if ((await Promise.race([proc.exited, timeout])) === 'timeout') killGroup(proc.child);
  }
  await crashServe(proc); // reaps anything left in the group
}
