/**
 * One process on a SQLite file (no lease, no other worker): a job run that gives up because the
 * blob store refuses its paid result past the runner's ~4 s of retries leaves its unit pending
 * and nothing refunded. The job must not stay 'processing' until a restart: this process runs it
 * again after a pause, one run at a time, and it is charged once; a job whose every run gives up
 * ends failed and refunded once after `maxInterruptions` failed runs.
 *
 * The core, runner, ledger, SQLite store and S3 blob store are the real ones, the bucket s3rver
 * behind a proxy that answers writes 503 SlowDown while told to; the provider is the local one,
 * counting its calls.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core';
import type { ProviderAdapter } from '../../src/core/providers/types';
import { makeTempDir, removeDir } from './helpers/api';
import { garmentPng } from './helpers/images';
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
    const { apiKey } = await core.admin.createAccount({
      email: `giveup-${randomBytes(4).toString('hex')}@example.test`,
      diamonds: 10,
    });
    const auth = `Bearer ${apiKey}`;
    const upload = await core.service.upload(auth, await garmentPng());
    const created = await core.service.createGeneration(auth, {
      toolId: 'photo_enhance',
      images: { user_photo: (upload.body as { url: string }).url },
    });
    expect(created.status).toBe(202);
    const id = (created.body as { id: string }).id;
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

  it('runs again here after a pause once the store is back: completed, charged once, never refunded, never two runs at once', async () => {
    const { id, proxy, state, log, settled } = await setUp();
    await until('the run to give up', () => log.some((l) => l.startsWith(`job ${id}: run`)));
    expect(state.calls).toBe(1);
    proxy.writesDown = false;

    const { job, units, balance, ledger } = await settled();
    expect(job.status, `${job.errorMessage ?? ''}\n${log.join('\n')}`).toBe('completed');
    expect(units.map((u) => u.status)).toEqual(['completed']);
    // The first result was never stored: paid again once, never two calls at once.
    expect(state.calls).toBe(2);
    expect(state.mostAtOnce).toBe(1);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
    expect(balance).toBe(10 + ledger.find((e) => e.kind === 'charge')!.amount);
    const giveUps = log.filter((l) => l.startsWith(`job ${id}: run failed`));
    expect(giveUps, log.join('\n')).toHaveLength(1);
    expect(giveUps[0]).toMatch(/runs again here in \d+ ms/);
  }, 60_000);

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
