/** Child processes of a soak schedule: the reference service (restartable) and `dropshoot run`. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { ReferenceJob, LedgerEntry, ReferenceServiceOptions } from '../reference-service';

const ROOT = path.resolve(import.meta.dirname, '../..');

const clockArgs = (offsetMs = 0) => (offsetMs ? ['--import', './test/soak/clock.ts'] : []);
const clockEnv = (offsetMs = 0) =>
  offsetMs ? { ...process.env, SOAK_CLOCK_OFFSET_MS: String(offsetMs) } : process.env;

export type ServiceProcess = {
  url: string;
  resultsUrl: string;
  stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  admin<T>(method: 'GET' | 'POST', p: string, body?: unknown): Promise<T>;
};

export async function startServiceProcess(input: {
  statePath: string;
  options: ReferenceServiceOptions;
  token: string;
  port?: number;
  resultsPort?: number;
  log: string[];
  /** The process's clock runs this far ahead (see clock.ts). */
  clockOffsetMs?: number;
}): Promise<ServiceProcess> {
  const args = [
    '--import',
    'tsx',
    ...clockArgs(input.clockOffsetMs),
    'test/reference-service/main.ts',
    '--port',
    String(input.port ?? 0),
    '--results-port',
    String(input.resultsPort ?? 0),
    '--state',
    input.statePath,
    '--admin-token',
    input.token,
    '--options',
    JSON.stringify(input.options),
  ];
  let child: ChildProcess | undefined;
  let line = '';
  // A port just freed by a killed process can still be taken for a moment: retry briefly.
  for (let attempt = 0; attempt < 10 && !line; attempt++) {
    child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: clockEnv(input.clockOffsetMs),
    });
    const stderr: Buffer[] = [];
    child.stderr!.on('data', (c: Buffer) => stderr.push(c));
    line = await new Promise<string>((resolve) => {
      readline.createInterface({ input: child!.stdout! }).once('line', resolve);
      child!.once('exit', () => resolve(''));
    });
    if (!line) {
      input.log.push(`service start failed: ${Buffer.concat(stderr).toString().slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  if (!line || !child) throw new Error('the reference service did not start');
  const started = JSON.parse(line) as { listening: string; results: string };
  const running = child;
  return {
    url: started.listening,
    resultsUrl: started.results,
    stop: (signal) =>
      new Promise<void>((resolve) => {
        if (running.exitCode !== null || running.signalCode !== null) return resolve();
        running.once('exit', () => resolve());
        running.kill(signal);
      }),
    admin: async <T>(method: 'GET' | 'POST', p: string, body?: unknown) => {
      const res = await fetch(`${started.listening}/_ref/${p}`, {
        method,
        headers: { 'x-ref-token': input.token, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!res.ok) throw new Error(`admin ${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
  };
}

export const readLedger = async (service: ServiceProcess, email: string) =>
  (
    await service.admin<{ ledger: LedgerEntry[] }>(
      'GET',
      `ledger?email=${encodeURIComponent(email)}`,
    )
  ).ledger;
export const readRequestsByDay = async (service: ServiceProcess, apiKey: string) =>
  (
    await service.admin<{ days: Record<string, { n: number; refused: number }> }>(
      'GET',
      `requests-by-day?apiKey=${encodeURIComponent(apiKey)}`,
    )
  ).days;
export const readJobs = async (service: ServiceProcess, email: string) =>
  (await service.admin<{ jobs: ReferenceJob[] }>('GET', `jobs?email=${encodeURIComponent(email)}`))
    .jobs;

export type CliOutcome = {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  killed: boolean;
  timedOut: boolean;
  ms: number;
};

/** Runs `dropshoot run` exactly as a user would; optionally kill -9 it after `killAtMs`. */
export function runCli(
  args: string[],
  opts: {
    killAtMs: number | null;
    timeoutMs: number;
    onStart?: (child: ChildProcess) => void;
    clockOffsetMs?: number;
  },
): Promise<CliOutcome> {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', ...clockArgs(opts.clockOffsetMs), 'src/cli/index.ts', 'run', ...args],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: clockEnv(opts.clockOffsetMs) },
  );
  opts.onStart?.(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (c: Buffer) => out.push(c));
  child.stderr!.on('data', (c: Buffer) => err.push(c));
  let killed = false;
  let timedOut = false;
  const killer =
    opts.killAtMs === null
      ? null
      : setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, opts.killAtMs);
  const timeout = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, opts.timeoutMs);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      if (killer) clearTimeout(killer);
      clearTimeout(timeout);
      // Wait for the pipes to drain before reading them.
      setImmediate(() =>
        resolve({
          code,
          signal,
          stdout: Buffer.concat(out).toString(),
          stderr: Buffer.concat(err).toString(),
          killed: killed && !timedOut,
          timedOut,
          ms: Date.now() - started,
        }),
      );
    });
  });
}
