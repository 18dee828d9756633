/**
 * Team mode (issue 14): a job run that loses its database connection partway. The worker's
 * connection is terminated with `pg_terminate_backend` while it stores a unit's result (held at
 * that point by a row lock the test takes, so the cut lands mid-write). A database that went away
 * says nothing about the shot: the unit must not fail, the job must not be refunded, the paid
 * provider call is not made again for a short cut, and the job is charged once. A cut that lasts
 * gives the job up for any worker (one lapse counted) rather than failing it.
 *
 * The core, lease loop, runner, ledger and PostgreSQL store are the real ones; the provider is
 * the local one, steered so the test knows when a unit's result is about to be written.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core';
import type { ProviderAdapter } from '../../src/core/providers/types';
import { removeDir } from './helpers/api';
import { chargedJob, chargedPack } from './helpers/charged-jobs';
import { localProvider } from './helpers/providers';
import { startUnavailableProxy } from './helpers/s3-unavailable-proxy';
import { startTestS3 } from './helpers/s3';
import { describePostgres } from '../support/postgres';

/** A promise and the function that resolves it. */
function opened(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The local provider, counting calls; each call waits for `gate` before answering. */
function gatedProvider() {
  const inner = localProvider();
  const state = { calls: 0, called: opened(), gate: opened() };
  const provider: ProviderAdapter = {
    name: 'test-gated',
    async run(job, ctx) {
      state.calls++;
      const out = await inner.run(job, ctx);
      state.called.resolve();
      await state.gate.promise;
      return out;
    },
  };
  return { provider, state };
}

/**
 * The local provider, per unit (a pack's shot index): counts calls and the most calls of one unit
 * in flight at once. The first unit called answers at once (whenever it is called); the others
 * wait for `gate`.
 */
function perUnitProvider() {
  const inner = localProvider();
  const state = {
    calls: new Map<string, number>(),
    inFlight: new Map<string, number>(),
    mostAtOnce: 0,
    first: undefined as string | undefined,
    firstCalled: opened(),
    gate: opened(),
  };
  const provider: ProviderAdapter = {
    name: 'test-per-unit',
    async run(job, ctx) {
      const unit = String(job.params.variant);
      state.calls.set(unit, (state.calls.get(unit) ?? 0) + 1);
      const now = (state.inFlight.get(unit) ?? 0) + 1;
      state.inFlight.set(unit, now);
      state.mostAtOnce = Math.max(state.mostAtOnce, now);
      try {
        const out = await inner.run(job, ctx);
        state.first ??= unit;
        if (unit === state.first) state.firstCalled.resolve();
        else await state.gate.promise;
        return out;
      } finally {
        state.inFlight.set(unit, state.inFlight.get(unit)! - 1);
      }
    },
  };
  return { provider, state };
}

describePostgres('team mode: a job run whose database connection is cut', (databaseUrl) => {
  const open: Core[] = [];
  const dirs: string[] = [];
  const clients: pg.Client[] = [];
  const closers: (() => Promise<void>)[] = [];
  /** Opens providers' gates a failed test left shut, so the cores can close. */
  const gates: (() => void)[] = [];
  afterEach(async () => {
    for (const open of gates.splice(0)) open();
    await Promise.all(open.splice(0).map((c) => c.close()));
    for (const close of closers.splice(0)) await close().catch(() => undefined);
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => undefined)));
    for (const d of dirs.splice(0)) removeDir(d);
  });

  async function service(
    schema: string,
    workers: number,
    provider: ProviderAdapter,
    log?: string[],
    extra: { blobsUrl?: string; concurrency?: number } = {},
  ) {
    const dir = path.join(os.tmpdir(), `dropshoot-dbdrop-${schema}`);
    if (!dirs.includes(dir)) dirs.push(dir);
    const url = new URL(databaseUrl());
    url.searchParams.set('schema', schema);
    const core = await openCore({
      dataDir: dir,
      databaseUrl: url.toString(),
      workers,
      leaseMs: 30_000,
      provider,
      ...(log ? { log: (m: string) => log.push(m) } : {}),
      ...extra,
    });
    open.push(core);
    return core;
  }

  async function client(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: databaseUrl(), application_name: 'dbdrop-test' });
    await c.connect();
    clients.push(c);
    return c;
  }

  /** Terminates every backend of the core's pool that waits on a lock; how many it cut. */
  async function cutWaitingWriters(admin: pg.Client): Promise<number> {
    const { rows } = await admin.query<{ cut: boolean }>(
      `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'dropshoot' AND wait_event_type = 'Lock'`,
    );
    return rows.filter((r) => r.cut).length;
  }

  async function until(what: string, check: () => Promise<boolean>, ms = 20_000) {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(25);
    }
  }

  async function settled(core: Core, id: string, auth: string) {
    await until(
      'the job to settle',
      async () => (await core.store.jobs.get(id))?.status !== 'processing',
    );
    const job = (await core.store.jobs.get(id))!;
    const balance = (await core.service.getAccount(auth)).body as { diamondBalance: number };
    return {
      job,
      units: await core.store.jobs.unitsOf(id),
      balance: balance.diamondBalance,
      ledger: await core.store.ledger.entriesFor(job.accountId),
    };
  }

  /** Holds the job's unit rows locked (the result write then waits); commit to let it go. */
  async function lockUnits(schema: string, id: string): Promise<pg.Client> {
    const locker = await client();
    await locker.query('BEGIN');
    await locker.query(`SELECT 1 FROM ${schema}.job_units WHERE job_id = $1 FOR UPDATE`, [id]);
    return locker;
  }

  /**
   * A charged job whose provider answered while its unit rows are locked: the result write waits
   * on the lock (cut it through `admin`, or commit `locker` to let it go).
   */
  async function resultWriteWaiting() {
    const schema = `dbdrop_${randomBytes(4).toString('hex')}`;
    const api = await service(schema, 0, localProvider());
    const { id, auth } = await chargedJob(api, 'dbdrop');
    const { provider, state } = gatedProvider();
    const log: string[] = [];
    await service(schema, 1, provider, log);
    await state.called.promise;
    const locker = await lockUnits(schema, id);
    state.gate.resolve();
    const admin = await client();
    return { api, id, auth, state, log, locker, admin };
  }

  it('a connection cut while the result is stored: the write is tried again, the job completes, the provider called once, charged once', async () => {
    const { api, id, auth, state, log, locker, admin } = await resultWriteWaiting();
    await until(
      'the result write waiting on the lock',
      async () => (await cutWaitingWriters(admin)) === 1,
    );
    await locker.query('COMMIT');

    const { job, units, balance, ledger } = await settled(api, id, auth);
    expect(job.status, job.errorMessage ?? '').toBe('completed');
    expect(units.map((u) => u.status)).toEqual(['completed']);
    expect(state.calls).toBe(1);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
    expect(balance).toBe(10 + ledger.find((e) => e.kind === 'charge')!.amount);
    expect(log.some((l) => /storing its result failed, the database went away/.test(l))).toBe(true);
  }, 60_000);

  it('a cut that outlasts the retries: the run gives the job up (one lapse, a log line), it runs again and completes, charged once, never refunded', async () => {
    const { api, id, auth, state, log, locker, admin } = await resultWriteWaiting();
    // Every write of the result is cut, past the ~4 s of retries, until the run gives up.
    await until(
      'the run to give the job up',
      async () => {
        await cutWaitingWriters(admin);
        return log.some((l) => l.includes(`job ${id}: run failed`));
      },
      30_000,
    );
    await locker.query('COMMIT');

    const { job, units, balance, ledger } = await settled(api, id, auth);
    expect(job.status, job.errorMessage ?? '').toBe('completed');
    expect(units.map((u) => u.status)).toEqual(['completed']);
    expect(job.leaseLapses).toBe(1);
    expect(log.find((l) => l.includes(`job ${id}: run failed`))).toMatch(
      /its lease is released \(one lapse counted\) for any worker to run it again/,
    );
    // Run again: the second provider call is the price of a result the database never took.
    expect(state.calls).toBe(2);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
    expect(balance).toBe(10 + ledger.find((e) => e.kind === 'charge')!.amount);
  }, 90_000);

  it('a unit whose result write gives up while other units of the job are at the provider: the run waits for them before giving the job up, so no unit is run twice at once, and each completed unit was paid once', async () => {
    const schema = `dbdrop_${randomBytes(4).toString('hex')}`;
    const api = await service(schema, 0, localProvider());
    const { id, auth, diamonds } = await chargedPack(api, 'dbdrop', 3);
    const locker = await lockUnits(schema, id);
    const { provider, state } = perUnitProvider();
    gates.push(state.gate.resolve);
    const log: string[] = [];
    await service(schema, 1, provider, log, { concurrency: 6 });
    await state.firstCalled.promise;
    const first = state.first!;
    const admin = await client();
    // Every write of the first unit's result is cut until its ~4 s of retries are spent (4
    // pauses logged, then the last try after 2 s); the other units stay at the provider.
    let retriesSpentAt: number | undefined;
    await until(
      'the first unit to give its result write up',
      async () => {
        await cutWaitingWriters(admin);
        const retries = log.filter((l) =>
          l.startsWith(`job ${id} unit ${first}: storing its result failed`),
        ).length;
        if (retries >= 4) retriesSpentAt ??= Date.now();
        return retriesSpentAt !== undefined && Date.now() - retriesSpentAt > 3_000;
      },
      30_000,
    );
    // Time for a run of the job elsewhere (here, after a release) to reach the provider.
    await sleep(1_500);
    expect(state.mostAtOnce, 'one unit at the provider twice at once').toBe(1);
    await locker.query('COMMIT');
    state.gate.resolve();

    const { job, units, balance, ledger } = await settled(api, id, auth);
    expect(state.mostAtOnce, 'one unit at the provider twice at once').toBe(1);
    const others = [...state.calls.keys()].filter((u) => u !== first);
    expect(others).toHaveLength(2);
    for (const u of others) expect(state.calls.get(u), `calls of unit ${u}`).toBe(1);
    // The first unit runs again: its paid result was never stored.
    expect(state.calls.get(first)).toBe(2);
    expect(job.status, job.errorMessage ?? '').toBe('completed');
    expect(units.map((u) => u.status)).toEqual(['completed', 'completed', 'completed']);
    expect(job.leaseLapses).toBe(1);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
    expect(balance).toBe(diamonds + ledger.find((e) => e.kind === 'charge')!.amount);
  }, 90_000);

  it('the blob store refusing writes while a paid result is stored: the write is tried again, the job completes, the provider called once, never refunded', async () => {
    const s3 = await startTestS3(['dbdrop']);
    closers.push(() => s3.close());
    const proxy = await startUnavailableProxy(s3.endpoint);
    closers.unshift(() => proxy.close());
    const blobsUrl = `s3://dbdrop/?endpoint=${encodeURIComponent(proxy.endpoint)}&region=us-east-1&forcePathStyle=true`;
    const schema = `dbdrop_${randomBytes(4).toString('hex')}`;
    const api = await service(schema, 0, localProvider(), undefined, { blobsUrl });
    const { id, auth } = await chargedJob(api, 'dbdrop');
    const { provider, state } = gatedProvider();
    const log: string[] = [];
    await service(schema, 1, provider, log, { blobsUrl });
    await state.called.promise;

    proxy.writesDown = true;
    state.gate.resolve();
    // Down past the SDK's own tries (3) and into the runner's, about a second in all.
    await until('refused result writes', async () => proxy.refused >= 3);
    await sleep(700);
    proxy.writesDown = false;

    const { job, units, balance, ledger } = await settled(api, id, auth);
    expect(proxy.refused).toBeGreaterThan(0);
    expect(job.status, job.errorMessage ?? '').toBe('completed');
    expect(units.map((u) => u.status)).toEqual(['completed']);
    expect(state.calls).toBe(1);
    expect(job.leaseLapses ?? 0).toBe(0);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
    expect(balance).toBe(10 + ledger.find((e) => e.kind === 'charge')!.amount);
    expect(log.some((l) => /storing its result failed, the blob store failed/.test(l))).toBe(true);
  }, 60_000);
});
