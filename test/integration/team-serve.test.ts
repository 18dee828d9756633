/**
 * Team mode through the real command (issue 14): three `dropshoot serve` processes on one
 * PostgreSQL database and one S3-compatible bucket (s3rver on loopback), a client spreading its
 * requests round-robin over them. Every rule of the spec holds across processes:
 * (a) concurrent charges of one account: the ledger stays exact and never negative;
 * (b) a key's daily cap: exactly N calls pass and every later one is refused, whichever process answers;
 * (c) one Idempotency-Key sent to several processes at once: one job, one charge;
 * (d) a process killed with `kill -9` while it runs jobs: they finish on the others once its
 *     leases run out, each charged once, their results downloadable;
 * (e) a process stopped with SIGTERM and `--drain-seconds 0` returns its leases at once (no wait
 *     for them to run out);
 * (f) with the default drain, a job in flight at SIGTERM finishes on that process (the provider
 *     called once, charged once), and a request under way is answered before it exits.
 * The AI provider is an OpenAI-Images-compatible stand-in on loopback that answers after a delay
 * the test sets, so jobs take as long as each case needs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePostgres } from '../support/postgres';
import {
  Api,
  download,
  expectError,
  expectSuccess,
  makeTempDir,
  removeDir,
  sleep,
  type ApiResponse,
} from './helpers/api';
import {
  cliJson,
  crashServe,
  createTeamAccount,
  spawnServe,
  stopServe,
  type ServeProcess,
} from './helpers/cli';
import { garmentPng, isPng } from './helpers/images';
import { startTestS3, type TestS3 } from './helpers/s3';
import {
  sleepingProviderEnv,
  startSleepingProvider,
  type SleepingProvider,
} from './helpers/sleeping-provider';

const BUCKET = 'team-blobs';
/** Short leases so a killed process's jobs come back within the test (the default is 30 s). */
const LEASE_SECONDS = 4;
/** Jobs each process runs at once. */
const WORKERS = 2;

/**
 * The load balancer's stand-in: every serve process gets its origin as `--public-url` (so an
 * upload URL one process made is recognised as its own by the others, and result URLs point
 * here), and it passes each request to the next live process in turn.
 */
async function startBalancer(
  backends: () => string[],
): Promise<{ url: string; close(): Promise<void> }> {
  let turn = 0;
  const server = http.createServer((req, res) => {
    const live = backends();
    const target = new URL(live[turn++ % live.length]!);
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describePostgres(
  'team mode: three serve processes on one PostgreSQL and one bucket',
  (databaseUrl) => {
    let s3: TestS3;
    let provider: SleepingProvider;
    let balancer: Awaited<ReturnType<typeof startBalancer>>;
    let db: pg.Pool;
    const serves: ServeProcess[] = [];
    const dirs: string[] = [];
    const savedEnv: Record<string, string | undefined> = {};

    /** A fresh serve process on the shared database and bucket (its own scratch folder). */
    async function startOne(extra: string[] = []): Promise<ServeProcess> {
      const dir = makeTempDir('team-serve-');
      dirs.push(dir);
      const proc = await spawnServe(
        dir,
        [
          '--database',
          databaseUrl(),
          '--blobs',
          s3.blobsUrl(BUCKET),
          '--workers',
          String(WORKERS),
          '--lease-seconds',
          String(LEASE_SECONDS),
          '--public-url',
          balancer.url,
          ...extra,
        ],
        90_000,
      );
      serves.push(proc);
      return proc;
    }

    beforeAll(async () => {
      s3 = await startTestS3([BUCKET]);
      provider = await startSleepingProvider();
      balancer = await startBalancer(() => alive().map((s) => s.url));
      // The serve processes inherit this environment (the AWS variables are set by startTestS3).
      for (const [name, value] of Object.entries(sleepingProviderEnv(provider.url))) {
        savedEnv[name] = process.env[name];
        process.env[name] = value;
      }
      db = new pg.Pool({ connectionString: databaseUrl(), max: 2 });
      // Started together: the schema is migrated once, under the advisory lock.
      await Promise.all([startOne(), startOne(), startOne()]);
    }, 180_000);

    afterAll(async () => {
      await Promise.allSettled(serves.map((s) => stopServe(s)));
      await db?.end();
      await provider?.close();
      await balancer?.close();
      await s3?.close();
      for (const [name, value] of Object.entries(savedEnv)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      for (const dir of dirs) removeDir(dir);
    }, 60_000);

    const alive = () =>
      serves.filter((s) => s.child.exitCode === null && s.child.signalCode === null);
    /** Spreads calls over the live processes in turn. */
    let turn = 0;
    const next = (key: string): Api => {
      const live = alive();
      return new Api(live[turn++ % live.length]!.url, key);
    };

    const account = (diamonds: number) => createTeamAccount(db, databaseUrl(), diamonds, 'team');

    type Entry = { kind: string; amount: number; jobId: string | null; balanceAfter: number };
    async function ledger(accountId: string): Promise<Entry[]> {
      const { rows } = await db.query<{
        kind: string;
        amount: string;
        job_id: string | null;
        balance_after: string;
      }>(
        'SELECT kind, amount, job_id, balance_after FROM ledger WHERE account_id = $1 ORDER BY id',
        [accountId],
      );
      return rows.map((r) => ({
        kind: r.kind,
        amount: Number(r.amount),
        jobId: r.job_id,
        balanceAfter: Number(r.balance_after),
      }));
    }

    /** Waits until none of the account's jobs is processing; returns their rows. */
    async function jobsWhenDone(accountId: string, timeoutMs: number) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { rows } = await db.query<{ id: string; status: string; lease_owner: string | null }>(
          'SELECT id, status, lease_owner FROM jobs WHERE account_id = $1 ORDER BY created_at',
          [accountId],
        );
        if (rows.every((r) => r.status !== 'processing')) return rows;
        if (Date.now() > deadline)
          throw new Error(
            `jobs still processing after ${timeoutMs} ms: ${JSON.stringify(rows)}\n` +
              serves.map((s) => s.stderr().slice(-2_000)).join('\n---\n'),
          );
        await sleep(200);
      }
    }

    async function photoUrl(apiKey: string): Promise<string> {
      return next(apiKey).uploadUrl(await garmentPng(120, 150));
    }

    it('(a) charges one account from three processes at once: exact, never negative', async () => {
      provider.delayMs = 20;
      const acct = await account(30);
      const url = await photoUrl(acct.apiKey);
      const answers = await Promise.all(
        Array.from({ length: 45 }, () =>
          next(acct.apiKey).generate({ toolId: 'photo_enhance', images: { user_photo: url } }),
        ),
      );
      const accepted = answers.filter((r) => r.status === 202);
      const refused = answers.filter((r) => r.status === 402);
      expect(accepted.length + refused.length, answers.map((r) => r.text).join('\n')).toBe(45);
      expect(accepted).toHaveLength(30);
      for (const r of refused) expectError(r, 402);
      for (const api of alive().map((s) => new Api(s.url, acct.apiKey)))
        expect(await api.balance()).toBe(0);

      const entries = await ledger(acct.id);
      expect(entries[0]).toMatchObject({ kind: 'grant', amount: 30, balanceAfter: 30 });
      const charges = entries.filter((e) => e.kind === 'charge');
      expect(charges).toHaveLength(30);
      expect(new Set(charges.map((e) => e.jobId)).size).toBe(30);
      // Every entry's balance follows from the one before it, and none is below 0.
      let balance = 0;
      for (const e of entries) {
        balance += e.amount;
        expect(e.balanceAfter).toBe(balance);
        expect(e.balanceAfter).toBeGreaterThanOrEqual(0);
      }
      expect(balance).toBe(0);
      // The jobs run on the processes' workers and finish once each, without refunds.
      const jobs = await jobsWhenDone(acct.id, 60_000);
      expect(jobs.map((j) => j.status)).toEqual(Array(30).fill('completed'));
      expect((await ledger(acct.id)).filter((e) => e.kind === 'refund')).toEqual([]);
    });

    /** Another key of the account, made with `admin create-key --database` and this daily cap. */
    const cappedKey = (email: string, cap: number) =>
      cliJson<{ apiKey: string }>([
        'admin',
        'create-key',
        '--database',
        databaseUrl(),
        '--email',
        email,
        '--daily-cap',
        String(cap),
      ]);

    it('(b) refuses the call after a key’s daily cap whichever process answers', async () => {
      const acct = await account(5);
      const cap = 7;
      const key = await cappedKey(acct.email, cap);
      const procs = alive();
      // One call at a time, each on the next process: 1..7 pass, 8, 9 and 10 are refused on each.
      for (let call = 1; call <= cap + 3; call++) {
        const api = new Api(procs[call % procs.length]!.url, key.apiKey);
        const res = await api.get('/v1/account');
        if (call <= cap) expectSuccess(res, 200);
        else expectError(res, 429, String(cap), 'reached');
      }
      // A burst on a fresh key: exactly the cap passes, spread over the processes.
      const burstCap = 20;
      const burst = await cappedKey(acct.email, burstCap);
      const answers = await Promise.all(
        Array.from({ length: 36 }, () => next(burst.apiKey).get('/v1/models')),
      );
      expect(answers.filter((r) => r.status === 200)).toHaveLength(burstCap);
      expect(answers.filter((r) => r.status === 429)).toHaveLength(36 - burstCap);
    });

    it('(c) one Idempotency-Key sent to three processes at once makes one job and one charge', async () => {
      provider.delayMs = 20;
      const acct = await account(10);
      const url = await photoUrl(acct.apiKey);
      const body = { toolId: 'photo_enhance', images: { user_photo: url } };
      const idem = `team-${process.pid}-${Date.now()}`;
      const answers: ApiResponse[] = await Promise.all(
        [...alive(), ...alive()].map((s) =>
          new Api(s.url, acct.apiKey).generate(body, { 'Idempotency-Key': idem }),
        ),
      );
      for (const r of answers) expectSuccess(r, 202);
      const ids = new Set(answers.map((r) => r.body.id as string));
      expect(ids.size).toBe(1);
      const { rows } = await db.query('SELECT id FROM jobs WHERE account_id = $1', [acct.id]);
      expect(rows).toHaveLength(1);
      const charges = (await ledger(acct.id)).filter((e) => e.kind === 'charge');
      expect(charges).toEqual([expect.objectContaining({ amount: -1, jobId: [...ids][0] })]);
      expect(await next(acct.apiKey).balance()).toBe(9);
      // Replayed later from yet another process: the same answer, still one charge.
      const later = await next(acct.apiKey).generate(body, { 'Idempotency-Key': idem });
      expectSuccess(later, 202);
      expect(later.body.id).toBe([...ids][0]);
      expect((await ledger(acct.id)).filter((e) => e.kind === 'charge')).toHaveLength(1);
    });

    it('(d) jobs of a process killed with kill -9 finish on the others after the lease, charged once', async () => {
      provider.delayMs = 3_000;
      const acct = await account(50);
      const url = await photoUrl(acct.apiKey);
      const requestsBefore = provider.requests;
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await next(acct.apiKey).generate({
          toolId: 'photo_enhance',
          images: { user_photo: url },
        });
        expectSuccess(res, 202);
        ids.push(res.body.id as string);
      }
      // The victim: the first process seen holding leases on some of these jobs.
      const leased = async () =>
        (
          await db.query<{ id: string; lease_owner: string }>(
            `SELECT id, lease_owner FROM jobs WHERE account_id = $1 AND status = 'processing' AND lease_owner IS NOT NULL`,
            [acct.id],
          )
        ).rows;
      let victim: ServeProcess | undefined;
      let held: string[] = [];
      const deadline = Date.now() + 20_000;
      while (!victim) {
        const rows = await leased();
        victim = alive().find((s) => rows.some((r) => r.lease_owner.includes(`:${s.child.pid}:`)));
        if (victim)
          held = rows
            .filter((r) => r.lease_owner.includes(`:${victim!.child.pid}:`))
            .map((r) => r.id);
        else if (Date.now() > deadline) throw new Error('no process took a lease on the jobs');
        else await sleep(50);
      }
      expect(held.length).toBeGreaterThan(0);
      const victimPid = `:${victim.child.pid}:`;
      const { rows: leases } = await db.query<{ lease_until: Date }>(
        'SELECT lease_until FROM jobs WHERE id = ANY($1)',
        [held],
      );
      const leaseEnd = Math.min(...leases.map((r) => r.lease_until.getTime()));
      await crashServe(victim);

      // Another process takes them only once the dead one's lease has run out (database clock).
      let takenAt: number | undefined;
      while (takenAt === undefined) {
        const { rows } = await db.query<{ owner: string | null; status: string; now: Date }>(
          'SELECT lease_owner AS owner, status, now() AS now FROM jobs WHERE id = ANY($1)',
          [held],
        );
        if (
          rows.some((r) => r.status !== 'processing' || (r.owner && !r.owner.includes(victimPid)))
        )
          takenAt = rows[0]!.now.getTime();
        else if (Date.now() > deadline + 60_000)
          throw new Error('nobody took the dead process jobs');
        else await sleep(50);
      }
      expect(takenAt).toBeGreaterThanOrEqual(leaseEnd);

      const jobs = await jobsWhenDone(acct.id, 60_000);
      expect(jobs.map((j) => j.status)).toEqual(Array(8).fill('completed'));
      // Each of the dead process's jobs counted one lapse when taken again (the crash-loop count: team-crash-loop.test.ts).
      const { rows: lapses } = await db.query<{ attempts: number }>(
        'SELECT attempts FROM jobs WHERE id = ANY($1)',
        [held],
      );
      expect(lapses.map((r) => r.attempts)).toEqual(held.map(() => 1));
      expect(jobs.every((j) => j.lease_owner === null)).toBe(true);
      // The killed process's calls were made again elsewhere.
      expect(provider.requests - requestsBefore).toBeGreaterThanOrEqual(8 + held.length);

      const entries = await ledger(acct.id);
      const charges = entries.filter((e) => e.kind === 'charge');
      expect(charges.map((e) => e.jobId).sort()).toEqual([...ids].sort());
      expect(entries.filter((e) => e.kind === 'refund')).toEqual([]);
      expect(await next(acct.apiKey).balance()).toBe(42);

      for (const id of held) {
        const job = await next(acct.apiKey).waitForJob(id, 10_000);
        expect(job.status).toBe('completed');
        const result = (job.resultUrls as string[])[0];
        expect(typeof result, JSON.stringify(job)).toBe('string');
        const file = await download(result!);
        expect(file.status).toBe(200);
        expect(isPng(file.bytes)).toBe(true);
      }
    }, 120_000);

    it('(e) a process stopped with SIGTERM and --drain-seconds 0 returns its leases at once for another to take', async () => {
      provider.delayMs = 3_000;
      if (alive().length < 2) await startOne();
      const extra = await startOne(['--drain-seconds', '0']);
      const acct = await account(20);
      const url = await photoUrl(acct.apiKey);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++)
        ids.push(
          await next(acct.apiKey).submit({ toolId: 'photo_enhance', images: { user_photo: url } }),
        );
      const pid = extra.child.pid!;
      const deadline = Date.now() + 20_000;
      for (;;) {
        const { rows } = await db.query(
          `SELECT id FROM jobs WHERE account_id = $1 AND status = 'processing' AND lease_owner LIKE $2`,
          [acct.id, `%:${pid}:%`],
        );
        if (rows.length > 0) break;
        if (Date.now() > deadline) throw new Error('the stopped process never took a job');
        await sleep(50);
      }
      await stopServe(extra);
      expect(extra.child.exitCode).toBe(0);
      // Released, not left to run out: no job of this account is leased to the stopped process.
      const { rows } = await db.query(
        `SELECT id FROM jobs WHERE account_id = $1 AND lease_owner LIKE $2`,
        [acct.id, `%:${pid}:%`],
      );
      expect(rows).toEqual([]);
      const jobs = await jobsWhenDone(acct.id, 60_000);
      expect(jobs.map((j) => j.status)).toEqual(Array(6).fill('completed'));
      expect((await ledger(acct.id)).filter((e) => e.kind === 'charge')).toHaveLength(6);
      expect((await ledger(acct.id)).filter((e) => e.kind === 'refund')).toEqual([]);
    }, 120_000);

    it('(f) SIGTERM mid-job with the default drain: the job in flight finishes on that process, the provider called once, charged once; a request under way is answered', async () => {
      provider.delayMs = 3_000;
      if (alive().length < 2) await startOne();
      const draining = await startOne();
      // More jobs than all processes' slots, so the one to be stopped surely takes some.
      const count = alive().length * WORKERS + 2;
      const acct = await account(count);
      const url = await photoUrl(acct.apiKey);
      const requestsBefore = provider.requests;
      const ids: string[] = [];
      for (let i = 0; i < count; i++)
        ids.push(
          await next(acct.apiKey).submit({ toolId: 'photo_enhance', images: { user_photo: url } }),
        );
      const pid = draining.child.pid!;
      let held: string[] = [];
      const deadline = Date.now() + 20_000;
      while (held.length === 0) {
        const { rows } = await db.query<{ id: string }>(
          `SELECT id FROM jobs WHERE account_id = $1 AND status = 'processing' AND lease_owner LIKE $2`,
          [acct.id, `%:${pid}:%`],
        );
        held = rows.map((r) => r.id);
        if (held.length > 0) break;
        if (Date.now() > deadline) throw new Error('the stopped process never took a job');
        await sleep(50);
      }

      // An upload under way on that process: half its body sent before SIGTERM, the rest after.
      const png = await garmentPng(100, 120);
      const target = new URL(draining.url);
      let sendRest!: () => void;
      const uploaded = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: target.hostname,
            port: target.port,
            method: 'POST',
            path: '/v1/uploads',
            headers: {
              authorization: `Bearer ${acct.apiKey}`,
              'content-type': 'image/png',
              'content-length': String(png.length),
            },
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.write(png.subarray(0, png.length >> 1));
        sendRest = () => req.end(png.subarray(png.length >> 1));
      });
      await sleep(300); // the request has reached the server

      const stoppedAt = Date.now();
      draining.child.kill('SIGTERM');
      await sleep(300);
      sendRest();
      const answer = await uploaded;
      expect(answer.status, answer.body).toBe(200);
      expect((JSON.parse(answer.body) as { url?: unknown }).url).toEqual(expect.any(String));

      const exit = await draining.exited;
      expect(exit.code).toBe(0);
      // It waited for its jobs (each a 3 s provider call), well inside the 25 s drain.
      expect(Date.now() - stoppedAt).toBeLessThan(20_000);
      // By the time it exited, the jobs it held were finished, by it: nobody else could take
      // them while it renewed their leases, and a provider call made elsewhere takes 3 s.
      const { rows: atExit } = await db.query<{ status: string; lease_owner: string | null }>(
        'SELECT status, lease_owner FROM jobs WHERE id = ANY($1)',
        [held],
      );
      expect(atExit.map((r) => r.status)).toEqual(held.map(() => 'completed'));
      expect(atExit.every((r) => r.lease_owner === null)).toBe(true);

      const jobs = await jobsWhenDone(acct.id, 60_000);
      expect(jobs.map((j) => j.status)).toEqual(Array(count).fill('completed'));
      // No call was cut and made again elsewhere.
      expect(provider.requests - requestsBefore).toBe(count);
      const entries = await ledger(acct.id);
      expect(
        entries
          .filter((e) => e.kind === 'charge')
          .map((e) => e.jobId)
          .sort(),
      ).toEqual([...ids].sort());
      expect(entries.filter((e) => e.kind === 'refund')).toEqual([]);
    }, 120_000);
  },
);
