/**
 * Team mode through the real `dropshoot serve` (issue 14), on PostgreSQL and s3rver:
 * (a) a second SIGTERM while the graceful drain waits for jobs stops the process at once (exit
 *     143), says so in a log line, and returns its leases, so another process takes the jobs at
 *     once; each job is charged once and never refunded;
 * (b) without a working LISTEN (here: a listen URL nobody answers, as when the direct connection
 *     past PgBouncer is down), a worker process still takes jobs another process created, by
 *     the claim poll, and says once that it fell back to polling;
 * (c) a LISTEN that receives no notices (here: on another database, as behind PgBouncer in
 *     transaction mode, where LISTEN is accepted and never hears anything) is found out by its
 *     probe notice: one warning, and jobs still run by the poll.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePostgres, testDatabaseUrl } from '../support/postgres';
import { Api, expectSuccess, makeTempDir, removeDir, sleep } from './helpers/api';
import { createTeamAccount, spawnServe, stopServe, type ServeProcess } from './helpers/cli';
import { garmentPng } from './helpers/images';
import { startTestS3, type TestS3 } from './helpers/s3';
import {
  sleepingProviderEnv,
  startSleepingProvider,
  type SleepingProvider,
} from './helpers/sleeping-provider';

const BUCKET = 'team-stop-blobs';

describePostgres('team mode: stopping serve at once, and jobs without LISTEN', (databaseUrl) => {
  let s3: TestS3;
  let provider: SleepingProvider;
  let db: pg.Pool;
  const serves: ServeProcess[] = [];
  const dirs: string[] = [];
  const savedEnv: Record<string, string | undefined> = {};

  async function startOne(extra: string[]): Promise<ServeProcess> {
    const dir = makeTempDir('team-stop-');
    dirs.push(dir);
    const proc = await spawnServe(
      dir,
      ['--database', databaseUrl(), '--blobs', s3.blobsUrl(BUCKET), ...extra],
      90_000,
    );
    serves.push(proc);
    return proc;
  }

  beforeAll(async () => {
    s3 = await startTestS3([BUCKET]);
    provider = await startSleepingProvider();
    for (const [name, value] of Object.entries(sleepingProviderEnv(provider.url))) {
      savedEnv[name] = process.env[name];
      process.env[name] = value;
    }
    db = new pg.Pool({ connectionString: databaseUrl(), max: 2 });
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(serves.map((s) => stopServe(s, 'SIGKILL')));
    await db?.end();
    await provider?.close();
    await s3?.close();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    for (const dir of dirs) removeDir(dir);
  }, 60_000);

  const account = (diamonds: number) => createTeamAccount(db, databaseUrl(), diamonds, 'stop');

  async function submit(api: Api, count: number): Promise<string[]> {
    const url = await api.uploadUrl(await garmentPng(120, 150));
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(await api.submit({ toolId: 'photo_enhance', images: { user_photo: url } }));
    return ids;
  }

  async function statuses(ids: string[], timeoutMs: number): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await db.query<{ status: string }>(
        'SELECT status FROM jobs WHERE id = ANY($1) ORDER BY id',
        [ids],
      );
      if (rows.every((r) => r.status !== 'processing') || Date.now() > deadline)
        return rows.map((r) => r.status);
      await sleep(100);
    }
  }

  async function chargesAndRefunds(accountId: string) {
    const { rows } = await db.query<{ kind: string; job_id: string | null }>(
      "SELECT kind, job_id FROM ledger WHERE account_id = $1 AND kind IN ('charge', 'refund')",
      [accountId],
    );
    return {
      charged: rows.filter((r) => r.kind === 'charge').map((r) => r.job_id),
      refunds: rows.filter((r) => r.kind === 'refund').length,
    };
  }

  it('(a) a second SIGTERM during the drain exits at once with 143, its leases returned for another process', async () => {
    // Jobs that would hold the 25 s drain for 30 s.
    provider.delayMs = 30_000;
    const stopping = await startOne(['--workers', '2', '--lease-seconds', '60']);
    const acct = await account(5);
    const ids = await submit(new Api(stopping.url, acct.apiKey), 2);
    const pid = stopping.child.pid!;
    const heldBy = async () =>
      (
        await db.query<{ id: string }>(
          'SELECT id FROM jobs WHERE id = ANY($1) AND lease_owner LIKE $2',
          [ids, `%:${pid}:%`],
        )
      ).rows.length;
    const deadline = Date.now() + 20_000;
    while ((await heldBy()) < 2) {
      if (Date.now() > deadline)
        throw new Error(`serve never took both jobs\n${stopping.stderr()}`);
      await sleep(50);
    }

    stopping.child.kill('SIGTERM');
    await sleep(1_000);
    // Draining: still up, waiting for its jobs, leases still held.
    expect(stopping.child.exitCode).toBeNull();
    expect(await heldBy()).toBe(2);

    const againAt = Date.now();
    stopping.child.kill('SIGTERM');
    const exit = await stopping.exited;
    expect(exit.code).toBe(143);
    expect(Date.now() - againAt).toBeLessThan(5_000);
    expect(stopping.stderr()).toMatch(/SIGTERM again while draining: stopping at once/);
    expect(stopping.stderr()).toMatch(/released 2 job leases for other processes/);
    // Returned, not left to run out in 60 s.
    expect(await heldBy()).toBe(0);

    // Another process takes them at once and finishes them: charged once each, no refund.
    provider.delayMs = 20;
    const takeover = await startOne(['--workers', '2']);
    expect(await statuses(ids, 20_000)).toEqual(['completed', 'completed']);
    const { charged, refunds } = await chargesAndRefunds(acct.id);
    expect(charged.sort()).toEqual([...ids].sort());
    expect(refunds).toBe(0);
    await stopServe(takeover);
  }, 120_000);

  it('(b) with a listen URL nobody answers, jobs created elsewhere still run (by the poll), with one warning', async () => {
    provider.delayMs = 20;
    const api = await startOne(['--workers', '0']);
    const worker = await startOne([
      '--workers',
      '2',
      '--database-listen-url',
      'postgres://dropshoot:listen-secret-1234@127.0.0.1:1/nowhere',
    ]);
    const acct = await account(5);
    const ids = await submit(new Api(api.url, acct.apiKey), 3);
    expect(await statuses(ids, 20_000)).toEqual(['completed', 'completed', 'completed']);
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1)',
      [ids],
    );
    expect(rows[0]!.n).toBe(3);
    // Several retries have failed by now; the fallback is said once, without the password.
    await sleep(2_000);
    const warnings = worker
      .stderr()
      .split('\n')
      .filter((l) => l.includes('listening for new jobs failed'));
    expect(warnings, worker.stderr()).toHaveLength(1);
    expect(warnings[0]).toMatch(/"level":40/);
    expect(warnings[0]).toMatch(/fall back to polling/);
    expect(worker.stderr()).not.toContain('listen-secret-1234');
    const { charged, refunds } = await chargesAndRefunds(acct.id);
    expect(charged).toHaveLength(3);
    expect(refunds).toBe(0);
    await Promise.all([stopServe(api), stopServe(worker)]);
  }, 120_000);

  it('(c) a LISTEN that hears nothing (as through PgBouncer) is found out: one warning, jobs run by the poll', async () => {
    provider.delayMs = 20;
    const api = await startOne(['--workers', '0']);
    // The base test database: LISTEN works there, but this file's database's notices never reach it.
    const deaf = testDatabaseUrl()!;
    const worker = await startOne(['--workers', '2', '--database-listen-url', deaf]);
    const acct = await account(5);
    const ids = await submit(new Api(api.url, acct.apiKey), 2);
    expect(await statuses(ids, 20_000)).toEqual(['completed', 'completed']);
    const deadline = Date.now() + 10_000;
    while (!worker.stderr().includes('receives no notices') && Date.now() < deadline)
      await sleep(100);
    const warnings = worker
      .stderr()
      .split('\n')
      .filter((l) => l.includes('receives no notices'));
    expect(warnings, worker.stderr()).toHaveLength(1);
    expect(warnings[0]).toMatch(/"level":40/);
    expect(warnings[0]).toMatch(/--database-listen-url/);
    expect(warnings[0]).toMatch(/claims fall back to polling/);
    await Promise.all([stopServe(api), stopServe(worker)]);
  }, 120_000);

  it('(d) a listen URL reaching the same database directly: listening, no warning', async () => {
    provider.delayMs = 20;
    const worker = await startOne(['--workers', '1', '--database-listen-url', databaseUrl()]);
    await sleep(4_000); // past the probe's 3 s
    expect(worker.stderr()).not.toMatch(/listening for new jobs failed|receives no notices/);
    const acct = await account(2);
    const ids = await submit(new Api(worker.url, acct.apiKey), 1);
    expect(await statuses(ids, 20_000)).toEqual(['completed']);
    await stopServe(worker);
  }, 60_000);
});
