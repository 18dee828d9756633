/**
 * Issue 14 item 3 at the store level: three Node processes, each with its own pool, on one
 * PostgreSQL database. Charges arriving at different processes never overdraw and sum exactly;
 * the 501st request of a key in a UTC day is refused while calls alternate between processes;
 * a refund happens once; an idempotency key charges once.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/core/store/pg/index';
import { PG_MIGRATIONS } from '../../src/core/store/pg/migrate';
import { openPgPool } from '../../src/core/store/pg/pool';
import type { Store } from '../../src/core/store/types';
import { describePostgres } from '../support/postgres';
import type { WorkerReply, WorkerRequest } from '../support/store-worker';

const WORKER = path.resolve(import.meta.dirname, '../support/store-worker.ts');
const T0 = '2026-11-22T10:00:00.000Z';
const uid = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

type Op = WorkerRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

class Worker {
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void }
  >();
  readonly ready: Promise<number>;

  constructor(
    private readonly child: ChildProcess,
    readonly name: string,
  ) {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code, signal) => {
      for (const waiter of this.waiting.values())
        waiter.reject(new Error(`${name} exited (${code ?? signal})`));
      this.waiting.clear();
    });
    this.ready = new Promise((resolve, reject) => {
      child.once('exit', (code) =>
        reject(new Error(`${name} exited (${code}) before it was ready: ${stderr}`)),
      );
      child.on('message', (message: { ready?: number } | WorkerReply) => {
        if ('ready' in message && message.ready !== undefined) return resolve(message.ready);
        const reply = message as WorkerReply;
        const waiter = this.waiting.get(reply.id);
        this.waiting.delete(reply.id);
        if (reply.ok) waiter?.resolve(reply.result);
        else waiter?.reject(new Error(`${name}: ${reply.error}`));
      });
    });
  }

  call<T>(op: Op): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ ...op, id });
    });
  }

  /** kill -9: no clean-up of any kind, as when a machine or the OOM killer takes the process. */
  killHard(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.disconnect();
    });
  }
}

describePostgres('PostgreSQL store across processes', (databaseUrl) => {
  const schema = `procs_${randomBytes(5).toString('hex')}`;
  let workers: Worker[] = [];
  const extra: Worker[] = [];
  let store: Store;

  const startWorker = (name: string) =>
    new Worker(
      fork(WORKER, [JSON.stringify({ url: databaseUrl(), schema, name })], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      }),
      name,
    );

  beforeAll(async () => {
    // Three processes start together on an empty schema: each migrates on open, one does the work.
    workers = ['p1', 'p2', 'p3'].map(startWorker);
    const pids = await Promise.all(workers.map((w) => w.ready));
    expect(new Set(pids).size).toBe(3);
    store = await openPostgresStore(databaseUrl(), { schema, max: 4 });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...workers, ...extra].map((w) => w.stop()));
    await store?.close();
  });

  async function account(balance: number): Promise<string> {
    const id = uid('acct');
    await store.transaction(async (tx) => {
      await tx.accounts.create({ id, email: `${id}@example.test`, createdAt: T0 });
      await tx.ledger.append({
        accountId: id,
        kind: 'grant',
        amount: balance,
        jobId: null,
        note: 'opening balance',
        createdAt: T0,
      });
    });
    return id;
  }
  async function key(accountId: string, dailyCap: number): Promise<string> {
    const id = uid('key');
    await store.keys.create({
      id,
      accountId,
      hash: uid('hash'),
      prefix: 'ds_live_test',
      dailyCap,
      createdAt: T0,
    });
    return id;
  }
  /** A processing job, charged `price` (as the service's create does, in one transaction). */
  async function chargedJob(accountId: string, keyId: string, price: number): Promise<string> {
    const id = uid('job');
    await store.transaction(async (tx) => {
      await tx.jobs.insert(
        {
          id,
          accountId,
          keyId,
          kind: 'generation',
          toolId: 'virtual_model',
          price,
          input: '{"units":[]}',
          templateSetId: null,
          readySetId: null,
          createdAt: T0,
        },
        [{ shotId: null }],
      );
      await tx.ledger.append({
        accountId,
        kind: 'charge',
        amount: -price,
        jobId: id,
        note: null,
        createdAt: T0,
      });
    });
    return id;
  }

  it('the three processes migrated the empty schema once between them', async () => {
    const { pool } = openPgPool(databaseUrl(), { schema, max: 1 });
    try {
      const rows = (
        await pool.query<{ version: number }>(
          'SELECT version FROM schema_migrations ORDER BY version',
        )
      ).rows;
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
    } finally {
      await pool.end();
    }
  });

  it('charges arriving at three processes at once never overdraw, and every total is exact', async () => {
    const tight = await account(100); // 60 charges of 3 against 100: exactly 33 can pass
    const ample = await account(300); // 60 charges of 2 against 300: all pass
    const attempts = workers.flatMap((w) =>
      Array.from({ length: 20 }, () => [
        w.call<{ charged: boolean }>({
          op: 'charge',
          accountId: tight,
          jobId: uid('job'),
          price: 3,
          at: T0,
        }),
        w.call<{ charged: boolean }>({
          op: 'charge',
          accountId: ample,
          jobId: uid('job'),
          price: 2,
          at: T0,
        }),
      ]).flat(),
    );
    const results = await Promise.all(attempts);
    expect(results.filter((r) => r.charged)).toHaveLength(33 + 60);

    for (const [accountId, opening, charged, price] of [
      [tight, 100, 33, 3],
      [ample, 300, 60, 2],
    ] as const) {
      const balance = await store.ledger.balanceOf(accountId);
      expect(balance).toBe(opening - charged * price);
      const entries = await store.ledger.entriesFor(accountId);
      expect(entries.filter((e) => e.kind === 'charge')).toHaveLength(charged);
      expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(balance);
      // Each entry's balance follows from the one before: no lost update, never below 0.
      let running = 0;
      for (const e of entries) {
        running += e.amount;
        expect(e.balanceAfter).toBe(running);
        expect(e.balanceAfter).toBeGreaterThanOrEqual(0);
      }
      // The charges came from all three processes, not one.
      expect(new Set(entries.filter((e) => e.kind === 'charge').map((e) => e.note))).toEqual(
        new Set(['p1', 'p2', 'p3']),
      );
    }
  });

  it('refuses the 501st request of a key in a UTC day while calls alternate between processes', async () => {
    const keyId = await key(await account(0), 500);
    const day = '2026-11-22';
    const counts: number[] = [];
    for (let i = 0; i < 500; i++) {
      const r = await workers[i % 3]!.call<{ count: number; refused: boolean }>({
        op: 'increment',
        keyId,
        day,
        cap: 500,
      });
      expect(r.refused).toBe(false);
      counts.push(r.count);
    }
    expect(counts).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    for (const w of workers) {
      expect(await w.call({ op: 'increment', keyId, day, cap: 500 })).toEqual({
        count: 500,
        refused: true,
      });
    }
    expect(await store.requests.get(keyId, day)).toBe(500);
    // A new UTC day starts from 1.
    expect(await workers[1]!.call({ op: 'increment', keyId, day: '2026-11-23', cap: 500 })).toEqual(
      { count: 1, refused: false },
    );
  });

  it('a burst of 750 requests of one key spread over three processes: exactly 500 counted, each count once', async () => {
    const keyId = await key(await account(0), 500);
    const day = '2026-11-22';
    const results = await Promise.all(
      workers.flatMap((w) =>
        Array.from({ length: 250 }, () =>
          w.call<{ count: number; refused: boolean }>({ op: 'increment', keyId, day, cap: 500 }),
        ),
      ),
    );
    const accepted = results.filter((r) => !r.refused).map((r) => r.count);
    expect(accepted.sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(results.filter((r) => r.refused).every((r) => r.count === 500)).toBe(true);
    expect(await store.requests.get(keyId, day)).toBe(500);
  });

  type Admitted = { admitted: number; refused: number };

  it('as the service counts (countRequest, allowances taken ahead): the 501st request is refused while calls alternate between processes', async () => {
    const accountId = await account(0);
    const keyId = await key(accountId, 500);
    const at = '2026-11-24T09:00:00.000Z';
    const admit = (w: Worker) =>
      w.call<Admitted>({ op: 'admit', keyId, accountId, cap: 500, at, n: 1 });
    for (let i = 0; i < 500; i++)
      expect(await admit(workers[i % 3]!)).toEqual({ admitted: 1, refused: 0 });
    for (const w of workers) expect(await admit(w)).toEqual({ admitted: 0, refused: 1 });
    expect(await store.requests.get(keyId, '2026-11-24')).toBe(500);
  });

  it('as the service counts: steady streams of one key at three processes admit exactly the cap, then refuse on each', async () => {
    for (const cap of [500, 2_000]) {
      const accountId = await account(0);
      const keyId = await key(accountId, cap);
      const at = '2026-11-24T09:00:00.000Z';
      let admitted = 0;
      const refusedBy = new Set<string>();
      // Rounds of 8 requests at once at each process, until every process refuses a whole round.
      for (let round = 0; refusedBy.size < 3; round++) {
        expect(round).toBeLessThan(1_000);
        const results = await Promise.all(
          workers.map((w) => w.call<Admitted>({ op: 'admit', keyId, accountId, cap, at, n: 8 })),
        );
        results.forEach((r, i) => {
          const name = workers[i]!.name;
          // A refusal is final: nothing is admitted at a process after it refused a whole round.
          if (refusedBy.has(name)) expect(r.admitted).toBe(0);
          admitted += r.admitted;
          if (r.admitted === 0) refusedBy.add(name);
        });
      }
      expect(admitted).toBe(cap);
      // What processes held ahead was used or given back: the shared count is the cap.
      expect(await store.requests.get(keyId, '2026-11-24')).toBe(cap);
    }
  });

  it('a failed job is refunded once when every process tries to fail it at the same moment', async () => {
    const accountId = await account(50);
    const keyId = await key(accountId, 500);
    const jobId = await chargedJob(accountId, keyId, 7);
    expect(await store.ledger.balanceOf(accountId)).toBe(43);
    const results = await Promise.all(
      workers.flatMap((w) =>
        Array.from({ length: 5 }, () =>
          w.call<{ refunded: number }>({ op: 'refund', jobId, at: T0 }),
        ),
      ),
    );
    expect(results.map((r) => r.refunded).sort((a, b) => b - a)).toEqual([
      7,
      ...Array<number>(14).fill(0),
    ]);
    expect(await store.ledger.balanceOf(accountId)).toBe(50);
    expect(
      (await store.ledger.entriesFor(accountId)).filter((e) => e.kind === 'refund'),
    ).toHaveLength(1);
    expect(await store.jobs.get(jobId)).toMatchObject({ status: 'failed' });
  });

  it('without the job-state gate, the store itself still refuses a second refund of a job', async () => {
    const accountId = await account(50);
    const keyId = await key(accountId, 500);
    const jobId = await chargedJob(accountId, keyId, 9);
    const settled = await Promise.allSettled(
      workers.flatMap((w) =>
        Array.from({ length: 5 }, () =>
          w.call<{ refunded: number }>({ op: 'refundUnguarded', jobId, at: T0 }),
        ),
      ),
    );
    const refunded = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.refunded] : []));
    expect(refunded.filter((r) => r > 0)).toEqual([9]);
    // Racers that passed the hasRefund check lost at the unique index; nothing else went wrong.
    for (const s of settled)
      if (s.status === 'rejected') expect(String(s.reason)).toMatch(/ledger_one_refund_per_job/);
    expect(await store.ledger.balanceOf(accountId)).toBe(50);
    expect(
      (await store.ledger.entriesFor(accountId)).filter((e) => e.kind === 'refund'),
    ).toHaveLength(1);
  });

  it('one Idempotency-Key sent to three processes at once charges once, and every answer names the same job', async () => {
    const accountId = await account(100);
    const key = uid('idem');
    const results = await Promise.all(
      workers.flatMap((w) =>
        Array.from({ length: 4 }, () =>
          w.call<{ charged: boolean; jobId: string | null }>({
            op: 'idempotentCharge',
            accountId,
            jobId: uid('job'),
            price: 5,
            key,
            bodyHash: 'h',
            at: T0,
          }),
        ),
      ),
    );
    expect(results.filter((r) => r.charged)).toHaveLength(1);
    const winner = results.find((r) => r.charged)!.jobId;
    expect(results.every((r) => r.jobId === winner)).toBe(true);
    expect(await store.ledger.balanceOf(accountId)).toBe(95);
    expect(
      (await store.ledger.entriesFor(accountId))
        .filter((e) => e.kind === 'charge')
        .map((e) => e.jobId),
    ).toEqual([winner]);
  });

  it('a process killed with SIGKILL mid-charge, holding the account row: its charge vanishes and the others proceed', async () => {
    const accountId = await account(10);
    const victim = startWorker('victim');
    extra.push(victim);
    await victim.ready;
    const doomedJob = uid('job');
    expect(
      await victim.call({ op: 'chargeAndHang', accountId, jobId: doomedJob, price: 4, at: T0 }),
    ).toBe('holding');

    // A charge at another process queues on the locked row: it cannot finish while the victim lives.
    let settled = false;
    const queued = workers[0]!
      .call<{ charged: boolean; balance: number }>({
        op: 'charge',
        accountId,
        jobId: uid('job'),
        price: 3,
        at: T0,
      })
      .finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);

    await victim.killHard();
    // The server rolls the dead connection's transaction back; the queued charge sees the full balance.
    expect(await queued).toEqual({ charged: true, balance: 7 });
    expect(
      await workers[1]!.call({ op: 'charge', accountId, jobId: uid('job'), price: 7, at: T0 }),
    ).toEqual({ charged: true, balance: 0 });
    expect(
      await workers[2]!.call({ op: 'charge', accountId, jobId: uid('job'), price: 1, at: T0 }),
    ).toEqual({ charged: false, balance: 0 });
    expect(await store.ledger.chargeOf(doomedJob)).toBeUndefined();
    expect((await store.ledger.entriesFor(accountId)).map((e) => e.balanceAfter)).toEqual([
      10, 7, 0,
    ]);
  });

  it('a job leased by a process killed with SIGKILL goes to another only once the lease runs out, finishes once, charged once', async () => {
    const accountId = await account(20);
    const keyId = await key(accountId, 500);
    await workers[1]!.call({ op: 'claim', workerId: 'p2', leaseMs: 60_000, limit: 100 }); // jobs earlier tests left processing are p2's
    const jobId = await chargedJob(accountId, keyId, 5);
    const victim = startWorker('victim-2');
    extra.push(victim);
    await victim.ready;
    expect(
      await victim.call({ op: 'claim', workerId: 'victim-2', leaseMs: 1500, limit: 1 }),
    ).toEqual([jobId]);
    await victim.call({ op: 'markStarted', jobId, idx: 0, at: T0 });
    const { pool } = openPgPool(databaseUrl(), { schema, max: 1 });
    try {
      const leaseRow = async () =>
        (
          await pool.query<{ owner: string | null; until: string | null; now: string }>(
            'SELECT lease_owner AS owner, lease_until AS until, clock_timestamp() AS now FROM jobs WHERE id = $1',
            [jobId],
          )
        ).rows[0]!;
      const leased = await leaseRow();
      expect(leased.owner).toBe('victim-2');
      await victim.killHard();

      // Another process polls for work (taking any other job left processing by earlier tests);
      // whenever it gets this one, the dead worker's lease had run out.
      let claimed: string[] = [];
      for (let polls = 0; !claimed.includes(jobId); polls++) {
        expect(polls).toBeLessThan(600); // 60 s: a lease of 1.5 s must have lapsed long before
        claimed = await workers[1]!.call<string[]>({
          op: 'claim',
          workerId: 'p2',
          leaseMs: 60_000,
          limit: 10,
        });
        if (!claimed.includes(jobId)) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const taken = await leaseRow();
      expect(taken.owner).toBe('p2');
      expect(Date.parse(taken.now)).toBeGreaterThanOrEqual(Date.parse(leased.until!));

      // Writes under the dead worker's name land nowhere; the new holder completes and finishes once.
      expect(
        await workers[0]!.call({
          op: 'completeUnit',
          jobId,
          idx: 0,
          blobIds: [],
          leaseOwner: 'victim-2',
        }),
      ).toBe(false);
      expect(
        await workers[1]!.call({
          op: 'completeUnit',
          jobId,
          idx: 0,
          blobIds: [],
          leaseOwner: 'p2',
        }),
      ).toBe(true);
      expect(await workers[2]!.call({ op: 'finish', jobId, at: T0 })).toBe(true);
      expect(await workers[1]!.call({ op: 'finish', jobId, at: T0 })).toBe(false);
      expect(
        await workers[1]!.call<string[]>({ op: 'renew', workerId: 'p2', leaseMs: 60_000 }),
      ).not.toContain(jobId);
    } finally {
      await pool.end();
    }
    expect(await store.jobs.get(jobId)).toMatchObject({ status: 'completed' });
    expect((await store.ledger.entriesFor(accountId)).map((e) => [e.kind, e.amount])).toEqual([
      ['grant', 20],
      ['charge', -5],
    ]);
    expect(await store.ledger.balanceOf(accountId)).toBe(15);
  });
});
