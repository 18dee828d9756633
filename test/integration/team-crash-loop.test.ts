/**
 * Crash loops in team mode (issue 14): a job whose worker process dies while running it is taken
 * again by another once the lease runs out; one that took down its worker `maxInterruptions`
 * times (default 3) must end failed and refunded, not go on to the next process forever.
 *
 * What a `kill -9` leaves in the database is a lease still naming its owner, running out; that
 * is what the dead workers here leave (claims under their names, never renewed). That a real
 * SIGKILL counts a lapse is checked by team-serve.test.ts (d). The core, its lease loop, runner,
 * ledger and PostgreSQL store are the real ones; the provider is the local one, counting calls.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core';
import { removeDir } from './helpers/api';
import { chargedJob } from './helpers/charged-jobs';
import { delayedProvider } from './helpers/providers';
import { describePostgres } from '../support/postgres';

const LEASE_MS = 200;

describePostgres('team mode: a job that keeps killing its worker', (databaseUrl) => {
  const open: Core[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
    for (const d of dirs.splice(0)) removeDir(d);
  });

  /** A process of the service; processes of one schema share a blob folder (as a bucket). */
  async function core(workers: number, schema: string, provider = delayedProvider(10)) {
    const dir = path.join(os.tmpdir(), `dropshoot-${schema}`);
    if (!dirs.includes(dir)) dirs.push(dir);
    const url = new URL(databaseUrl());
    url.searchParams.set('schema', schema);
    const c = await openCore({
      dataDir: dir,
      databaseUrl: url.toString(),
      workers,
      leaseMs: LEASE_MS,
      provider,
    });
    open.push(c);
    return { core: c, provider };
  }

  /** `deaths` workers claim the job in turn and die (their leases run out, never renewed). */
  async function dieOn(api: Core, id: string, deaths: number): Promise<void> {
    for (let n = 1; n <= deaths; n++) {
      expect(await api.store.jobs.claim(`dead-worker-${n}`, LEASE_MS, 10)).toEqual([id]);
      await sleep(LEASE_MS + 50);
    }
  }

  async function settled(api: Core, id: string, auth: string) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const job = await api.store.jobs.get(id);
      if (job && job.status !== 'processing') {
        const balance = (await api.service.getAccount(auth)).body as { diamondBalance: number };
        return {
          job,
          balance: balance.diamondBalance,
          ledger: await api.store.ledger.entriesFor(job.accountId),
        };
      }
      if (Date.now() > deadline) throw new Error(`job ${id} still processing`);
      await sleep(50);
    }
  }

  it('fails and refunds, once, a job whose worker died three times, without calling the provider again', async () => {
    const schema = `crash_${randomBytes(4).toString('hex')}`;
    const { core: api } = await core(0, schema);
    const { id, auth } = await chargedJob(api, 'crash');
    await dieOn(api, id, 3);
    expect((await api.store.jobs.get(id))?.leaseLapses).toBe(2); // the third lapse is counted by the next claim

    const { provider } = await core(1, schema);
    const { job, balance, ledger } = await settled(api, id, auth);
    expect(job.leaseLapses).toBe(3);
    expect(job.status).toBe('failed');
    expect(job.errorMessage).toMatch(/cut 3 times/);
    expect(provider.calls).toEqual([]);
    expect(balance).toBe(10);
    expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    const body = (await api.service.getGeneration(auth, id)).body as { status: string };
    expect(body.status).toBe('failed');
  }, 60_000);

  it('still runs a job whose worker died twice, once, and charges it once', async () => {
    const schema = `crash_${randomBytes(4).toString('hex')}`;
    const { core: api } = await core(0, schema);
    const { id, auth } = await chargedJob(api, 'crash');
    await dieOn(api, id, 2);

    const { provider } = await core(1, schema);
    const { job, balance, ledger } = await settled(api, id, auth);
    expect(job.leaseLapses).toBe(2);
    expect(job.status, job.errorMessage ?? '').toBe('completed');
    expect(provider.calls).toHaveLength(1);
    const charges = ledger.filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amount).toBeLessThan(0);
    expect(balance).toBe(10 + charges[0]!.amount);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
  }, 60_000);

  it('counts a lease released on a clean stop as no lapse', async () => {
    const schema = `crash_${randomBytes(4).toString('hex')}`;
    const { core: api } = await core(0, schema);
    const { id } = await chargedJob(api, 'crash');
    for (let n = 1; n <= 4; n++) {
      expect(await api.store.jobs.claim(`stopping-worker-${n}`, 60_000, 10)).toEqual([id]);
      expect(await api.store.jobs.releaseLeases(`stopping-worker-${n}`)).toBe(1);
    }
    expect((await api.store.jobs.get(id))?.leaseLapses).toBe(0);
  });
});
