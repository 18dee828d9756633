/**
 * One process on a SQLite file (no lease, no other worker): a job run that gives up because the
 * blob store refuses its paid result past the runner's ~4 s of retries leaves its unit pending
 * and nothing refunded. The job must not stay 'processing' until a restart: this process runs it
 * again after a pause, one run at a time, storing the result the failed run was paid for (the
 * provider is not paid again), and it is charged once; a job whose every run gives up ends failed
 * and refunded once after `maxInterruptions` failed runs in a row.
 *
 * The core, runner, ledger, SQLite store and S3 blob store are the real ones, the bucket s3rver
 * behind a proxy that answers writes 503 SlowDown while told to; the provider is the local one,
 * counting its calls.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core';
import type { ProviderAdapter } from '../../src/core/providers/types';
import { makeTempDir, removeDir } from './helpers/api';
import { chargedJob, chargedPack } from './helpers/charged-jobs';
import { localProvider } from './helpers/providers';
import { startUnavailableProxy, type UnavailableProxy } from './helpers/s3-unavailable-proxy';
import { startTestS3 } from './helpers/s3';

/** The local provider, counting calls and the most at once; the first call waits for `gate`. */
function countingProvider() {
  const inner = localProvider();
  let called!: () => void;
  let open!: () => void;
  const state = {
    calls: 0,
    inFlight: 0,
    mostAtOnce: 0,
    called: new Promise<void>((r) => (called = r)),
    gate: new Promise<void>((r) => (open = r)),
    open: () => open(),
  };
  const provider: ProviderAdapter = {
    name: 'test-counting',
    async run(job, ctx) {
      state.calls++;
      state.mostAtOnce = Math.max(state.mostAtOnce, ++state.inFlight);
      try {
        const out = await inner.run(job, ctx);
        called();
        await state.gate;
        return out;
      } finally {
        state.inFlight--;
      }
    },
  };
  return { provider, state };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe('one SQLite process: a job run that gives up on its blob store', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const clean of cleanups.splice(0).reverse()) await clean();
  });

  async function setUp(maxInterruptions?: number) {
    const s3 = await startTestS3(['giveup']);
    cleanups.push(() => s3.close());
    const proxy: UnavailableProxy = await startUnavailableProxy(s3.endpoint);
    cleanups.push(() => proxy.close());
    const dataDir = makeTempDir('giveup-sqlite-');
    cleanups.push(() => removeDir(dataDir));
    const { provider, state } = countingProvider();
    cleanups.push(() => state.open());
    const log: string[] = [];
    const core: Core = await openCore({
      dataDir,
      blobsUrl: `s3://giveup/?endpoint=${encodeURIComponent(proxy.endpoint)}&region=us-east-1&forcePathStyle=true`,
      provider,
      log: (m) => log.push(m),
      ...(maxInterruptions !== undefined ? { maxInterruptions } : {}),
    });
    cleanups.push(() => core.close());
    const { id, auth } = await chargedJob(core, 'giveup');
    // The result's write is refused from the first provider call on.
    await state.called;
    proxy.writesDown = true;
    state.open();
    const settled = async () => {
      await until('the job to leave processing', async () => {
        return (await core.store.jobs.get(id))?.status !== 'processing';
      });
      const job = (await core.store.jobs.get(id))!;
      const balance = (await core.service.getAccount(auth)).body as { diamondBalance: number };
      return {
        job,
        units: await core.store.jobs.unitsOf(id),
        balance: balance.diamondBalance,
        ledger: await core.store.ledger.entriesFor(job.accountId),
      };
    };
    return { id, proxy, state, log, settled };
  }

  it('runs again here after a pause once the store is back and stores the result already paid for: completed, charged once, never refunded, the provider called once', async () => {
    const { id, proxy, state, log, settled } = await setUp();
    await until('the run to give up', () => log.some((l) => l.startsWith(`job ${id}: run`)));
    expect(state.calls).toBe(1);
    proxy.writesDown = false;

    const { job, units, balance, ledger } = await settled();
    expect(job.status, `${job.errorMessage ?? ''}\n${log.join('\n')}`).toBe('completed');
    expect(units.map((u) => u.status)).toEqual(['completed']);
    // The first run's paid result is the one stored: the provider is not paid again for it.
    expect(state.calls).toBe(1);
    expect(log).toContain(`job ${id} unit 0: storing the result paid for in a failed run`);
    expect(state.mostAtOnce).toBe(1);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
    expect(balance).toBe(10 + ledger.find((e) => e.kind === 'charge')!.amount);
    const giveUps = log.filter((l) => l.startsWith(`job ${id}: run failed`));
    expect(giveUps, log.join('\n')).toHaveLength(1);
    expect(giveUps[0]).toMatch(/runs again here in \d+ ms/);
  }, 60_000);

  it('a pack whose runs each store a shot before giving up is not failed: only runs in a row that store nothing count, no shot is paid twice', async () => {
    const s3 = await startTestS3(['giveup-pack']);
    cleanups.push(() => s3.close());
    const proxy = await startUnavailableProxy(s3.endpoint);
    cleanups.push(() => proxy.close());
    const dataDir = makeTempDir('giveup-pack-');
    cleanups.push(() => removeDir(dataDir));
    const inner = localProvider();
    let calls = 0;
    const provider: ProviderAdapter = {
      name: 'test-counting',
      async run(job, ctx) {
        const out = await inner.run(job, ctx);
        // The 2nd and 4th paid results meet a store that is down until the run gives up.
        if (++calls % 2 === 0) proxy.writesDown = true;
        return out;
      },
    };
    const log: string[] = [];
    const core: Core = await openCore({
      dataDir,
      blobsUrl: `s3://giveup-pack/?endpoint=${encodeURIComponent(proxy.endpoint)}&region=us-east-1&forcePathStyle=true`,
      provider,
      concurrency: 1,
      maxInterruptions: 2,
      log: (m) => {
        log.push(m);
        if (m.includes('runs again here')) proxy.writesDown = false;
      },
    });
    cleanups.push(() => core.close());
    const { id } = await chargedPack(core, 'giveup-pack', 4);
    await until(
      'the pack to leave processing',
      async () => (await core.store.jobs.get(id))?.status !== 'processing',
      90_000,
    );
    const job = (await core.store.jobs.get(id))!;
    // Two runs gave up, each after storing a shot: never two in a row with nothing stored.
    expect(log.filter((l) => l.startsWith(`job ${id}: run failed`))).toHaveLength(2);
    expect(job.status, log.join('\n')).toBe('completed');
    expect((await core.store.jobs.unitsOf(id)).map((u) => u.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
    expect(calls).toBe(4);
    const ledger = await core.store.ledger.entriesFor(job.accountId);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
  }, 120_000);

  it('a clean stop while a failed run waits to run again is not counted as a crash at the next start', async () => {
    const s3 = await startTestS3(['giveup-stop']);
    cleanups.push(() => s3.close());
    const proxy = await startUnavailableProxy(s3.endpoint);
    cleanups.push(() => proxy.close());
    const dataDir = makeTempDir('giveup-stop-');
    cleanups.push(() => removeDir(dataDir));
    const inner = localProvider();
    const provider: ProviderAdapter = {
      name: 'test-store-down',
      async run(job, ctx) {
        const out = await inner.run(job, ctx);
        proxy.writesDown = true;
        return out;
      },
    };
    const blobsUrl = `s3://giveup-stop/?endpoint=${encodeURIComponent(proxy.endpoint)}&region=us-east-1&forcePathStyle=true`;
    const log: string[] = [];
    const first = await openCore({ dataDir, blobsUrl, provider, log: (m) => log.push(m) });
    const { id } = await chargedJob(first, 'giveup-stop');
    await until('the run to give up', () => log.some((l) => l.startsWith(`job ${id}: run failed`)));
    await first.close(); // during the pause before it runs again
    proxy.writesDown = false;
    const again: string[] = [];
    const second = await openCore({
      dataDir,
      blobsUrl,
      provider: inner,
      log: (m) => again.push(m),
    });
    cleanups.push(() => second.close());
    await until(
      'the job to finish',
      async () => (await second.store.jobs.get(id))?.status !== 'processing',
    );
    expect((await second.store.jobs.get(id))?.status).toBe('completed');
    expect(again.filter((l) => l.includes('cut by a crash'))).toEqual([]);
  }, 90_000);

  it('a job whose every run gives up ends failed and refunded once after maxInterruptions failed runs, the provider not called again', async () => {
    const { proxy, state, log, settled } = await setUp(1);
    const { job, units, balance, ledger } = await settled();
    expect(proxy.refused).toBeGreaterThan(0);
    expect(job.status, log.join('\n')).toBe('failed');
    expect(units.map((u) => u.status)).toEqual(['failed']);
    expect(job.errorMessage).toMatch(/cut 1 times/);
    expect(state.calls).toBe(1);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(1);
    expect(balance).toBe(10);
  }, 60_000);
});
