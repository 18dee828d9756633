/**
 * Two Dropshoot processes starting at the same instant after a crash (kill -9 leaves studio.lock
 * behind) must not both take the data folder: both would drive one queue. Each round lays a lock
 * of a process that has ended and lets several processes take it in the same millisecond.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

const CONTENDER = path.resolve(import.meta.dirname, 'helpers/lock-contender.ts');
const CONTENDERS = 4;
const ROUNDS = 40;

type Outcome = { dataDir: string; got: boolean; error?: string };

let root: string;
let contenders: ChildProcess[] = [];

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-lock-race-'));
  contenders = Array.from({ length: CONTENDERS }, () =>
    fork(CONTENDER, [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    }),
  );
  await Promise.all(
    contenders.map((child) => new Promise((resolve) => child.once('message', resolve))),
  );
}, 60_000);

afterAll(() => {
  for (const child of contenders) child.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

/** The pid of a process that has run and ended: what a crash leaves in the lock file. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

function contend(child: ChildProcess, dataDir: string, startAt: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const onMessage = (outcome: Outcome) => {
      if (outcome.dataDir !== dataDir) return;
      child.off('message', onMessage);
      resolve(outcome);
    };
    child.on('message', onMessage);
    child.send({ dataDir, startAt });
  });
}

it('a stale lock taken at the same instant goes to exactly one process, whose pid it holds', async () => {
  const failures: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const dataDir = path.join(root, `round-${round}`);
    fs.mkdirSync(dataDir);
    fs.writeFileSync(path.join(dataDir, 'studio.lock'), String(endedPid()));
    const startAt = Date.now() + 150;
    const outcomes = await Promise.all(contenders.map((c) => contend(c, dataDir, startAt)));
    const winners = outcomes.flatMap((o, i) => (o.got ? [contenders[i]!.pid] : []));
    const others = outcomes.filter((o) => !o.got).map((o) => o.error);
    const lockFile = path.join(dataDir, 'studio.lock');
    const lockHolds = fs.existsSync(lockFile) ? fs.readFileSync(lockFile, 'utf8') : 'no file';
    const leftovers = fs.readdirSync(dataDir).filter((name) => name !== 'studio.lock');
    if (
      winners.length !== 1 ||
      lockHolds !== String(winners[0]) ||
      others.some((name) => name !== 'DataFolderBusy') ||
      leftovers.length > 0
    )
      failures.push(
        `round ${round}: winners ${winners.join(',') || 'none'}, lock holds ${lockHolds}, others ${others.join(',')}, leftovers ${leftovers.join(',')}`,
      );
  }
  expect(failures).toEqual([]);
}, 120_000);
