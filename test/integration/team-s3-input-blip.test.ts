/**
 * Team mode (review rev28, defect 2): the bucket goes away for a few seconds while a worker copies
 * a charged job's input to run it. That says nothing about the shot: the copy is tried again, then
 * the job is released with its shot pending (no lapse counted: it is not a crash) and claimed
 * again once the hold passes. It completes, charged once and never refunded, and the customer's
 * job never shows our bucket or its endpoint. (It failed at once and was refunded, its
 * errorMessage "reading a blob on s3://… at http://127.0.0.1:… failed: … ECONNREFUSED".)
 *
 *
 * Away while a paid result is written, the write is tried again for longer under the lease (its
 * renewals need only the database): a run that gave up is run again and pays the provider again,
 * so that give-up still counts a lapse, and an outage that outlasts them ends the job refunded
 * instead of paying the provider every minute until the bucket is back.
 *
 * Away for good during the input copy (review rev29 D4: bucket deleted, credentials revoked), the
 * reads are bounded by time instead: past the runner's bound (10 min, shortened here) the shot
 * fails in plain words and the job is refunded (it stayed 'processing' for ever, released and
 * claimed again every 5 s, never refunded).
 *
 * The core, lease loop, runner and PostgreSQL store are the real ones; the bucket is an s3rver
 * stopped and started again on the same port and folder.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import S3rver from 's3rver';
import { afterEach, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core';
import type { ProviderAdapter } from '../../src/core/providers/types';
import { makeTempDir, removeDir } from './helpers/api';
import { chargedJob } from './helpers/charged-jobs';
import { localProvider } from './helpers/providers';
import { S3RVER_CREDENTIALS } from './helpers/s3';
import { describePostgres } from '../support/postgres';

const BUCKET = 'blip';

/** An s3rver that can be stopped and started again where it was (port, folder, objects). */
async function stoppableS3() {
  const directory = makeTempDir('s3rver-blip-');
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  let server: S3rver | undefined;
  const start = async () => {
    server = new S3rver({
      address: '127.0.0.1',
      port,
      silent: true,
      directory,
      configureBuckets: [{ name: BUCKET }],
    });
    await server.run();
  };
  const stop = async () => {
    await server?.close();
    server = undefined;
  };
  await start();
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    blobsUrl: `s3://${BUCKET}/?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
    start,
    stop,
    async close() {
      await stop();
      removeDir(directory);
    },
  };
}

describePostgres('team mode: the bucket away while a worker copies a job input', (databaseUrl) => {
  const cores: Core[] = [];
  const closers: (() => Promise<void>)[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(cores.splice(0).map((c) => c.close()));
    for (const close of closers.splice(0)) await close().catch(() => undefined);
    for (const d of dirs.splice(0)) removeDir(d);
  });

  async function service(
    schema: string,
    workers: number,
    provider: ProviderAdapter,
    blobsUrl: string,
    opts: { log?: string[]; maxInterruptions?: number; inputReadGiveUpMs?: number } = {},
  ) {
    const dir = path.join(os.tmpdir(), `dropshoot-s3blip-${schema}-${workers}`);
    dirs.push(dir);
    const url = new URL(databaseUrl());
    url.searchParams.set('schema', schema);
    const { log, ...limits } = opts;
    const core = await openCore({
      dataDir: dir,
      databaseUrl: url.toString(),
      blobsUrl,
      workers,
      leaseMs: 30_000,
      provider,
      ...limits,
      ...(log ? { log: (m: string) => log.push(m) } : {}),
    });
    cores.push(core);
    return core;
  }

  /** A charged job on a fresh schema and bucket, made by a core with no workers (none runs it). */
  async function chargedJobOnS3() {
    const s3 = await stoppableS3();
    closers.push(() => s3.close());
    const schema = `s3blip_${randomBytes(4).toString('hex')}`;
    const api = await service(schema, 0, localProvider(), s3.blobsUrl);
    return { s3, schema, api, ...(await chargedJob(api, 's3blip')) };
  }

  /**
   * The local provider, counting its runs; `gated`: each run, once it has its outputs, says so
   * (`answered`) and waits for `openGate` before handing them over (to stop the bucket between).
   */
  function countingProvider(gated = false) {
    const inner = localProvider();
    let calls = 0;
    let answered!: () => void;
    const called = new Promise<void>((resolve) => (answered = resolve));
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    closers.unshift(async () => openGate());
    const provider: ProviderAdapter = {
      name: gated ? 'test-gated' : 'test-counting',
      async run(job, ctx) {
        calls++;
        const out = await inner.run(job, ctx);
        answered();
        if (gated) await gate;
        return out;
      },
    };
    return { provider, calls: () => calls, called, openGate };
  }

  /** The job once it is no longer processing (or at `withinMs`), with its ledger. */
  async function settled(api: Core, id: string, withinMs: number) {
    const deadline = Date.now() + withinMs;
    while ((await api.store.jobs.get(id))?.status === 'processing' && Date.now() < deadline)
      await sleep(250);
    const job = (await api.store.jobs.get(id))!;
    return { job, ledger: await api.store.ledger.entriesFor(job.accountId) };
  }

  it('a 6 s outage during the input copy: the job completes, provider called once, charged once, no refund, no storage detail shown', async () => {
    const { s3, schema, api, id, auth } = await chargedJobOnS3();
    await s3.stop();
    const { provider, calls } = countingProvider();
    const log: string[] = [];
    await service(schema, 1, provider, s3.blobsUrl, { log });
    // Longer than the runner's tries of the copy (~4 s): the run gives the job up once.
    await sleep(6_000);
    await s3.start();

    const { job, ledger } = await settled(api, id, 30_000);
    const units = await api.store.jobs.unitsOf(id);
    const polled = (await api.service.getGeneration(auth, id)).body as Record<string, unknown>;

    expect(job.status, job.errorMessage ?? '').toBe('completed');
    const shown = JSON.stringify({ job, units, polled });
    expect(shown).not.toContain(s3.endpoint);
    expect(shown).not.toContain(`s3://${BUCKET}`);
    expect(
      log.some((l) => /copying its inputs failed, the blob store failed/.test(l)),
      log.join('\n'),
    ).toBe(true);
    // Given up once the tries ran out, and released without a lapse to wait out the outage.
    expect(
      log.some((l) => /the blob store failed: its lease is released \(no lapse counted\)/.test(l)),
      log.join('\n'),
    ).toBe(true);
    expect(units.map((u) => u.status)).toEqual(['completed']);
    expect(calls()).toBe(1);
    expect(job.leaseLapses ?? 0).toBe(0);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
  }, 90_000);

  it('the bucket away for good before the input copy: past the time bound the shot fails in plain words, the job refunded, the provider never called', async () => {
    const { s3, schema, api, id, auth } = await chargedJobOnS3();
    await s3.stop();
    const { provider, calls } = countingProvider();
    const log: string[] = [];
    // 8 s: past the first run's ~4 s of tries, so the job is released once (no lapse) and the
    // bound ends it on the next run, ~5 s later.
    await service(schema, 1, provider, s3.blobsUrl, { log, inputReadGiveUpMs: 8_000 });

    const { job, ledger } = await settled(api, id, 40_000);
    const units = await api.store.jobs.unitsOf(id);
    const polled = (await api.service.getGeneration(auth, id)).body as Record<string, unknown>;

    // Without the bound: still 'processing' at the deadline, released and claimed every 5 s.
    expect(job.status, log.join('\n')).toBe('failed');
    expect(job.errorMessage).toBe('an input image could not be read from storage for 8 seconds');
    const shown = JSON.stringify({ job, units, polled });
    expect(shown).not.toContain(s3.endpoint);
    expect(shown).not.toContain(`s3://${BUCKET}`);
    expect(
      log.some((l) => /the blob store failed: its lease is released \(no lapse counted\)/.test(l)),
      log.join('\n'),
    ).toBe(true);
    expect(units.map((u) => u.status)).toEqual(['failed']);
    expect(calls()).toBe(0);
    expect(job.leaseLapses ?? 0).toBe(0);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(1);
  }, 90_000);

  it('a 12 s outage while the paid result is written: the write waits it out under the lease, the provider called once, charged once, no refund', async () => {
    const { s3, schema, api, id, auth } = await chargedJobOnS3();
    const { provider, calls, called, openGate } = countingProvider(true);
    const log: string[] = [];
    await service(schema, 1, provider, s3.blobsUrl, { log });
    await called;
    await s3.stop();
    openGate();
    await sleep(12_000);
    await s3.start();

    const { job, ledger } = await settled(api, id, 60_000);
    const polled = (await api.service.getGeneration(auth, id)).body as { status: string };

    expect(job.status, job.errorMessage ?? '').toBe('completed');
    expect(polled.status).toBe('completed');
    expect(
      log.some((l) => /storing its result failed, the blob store failed/.test(l)),
      log.join('\n'),
    ).toBe(true);
    expect(calls(), log.join('\n')).toBe(1);
    expect(job.leaseLapses ?? 0).toBe(0);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toEqual([]);
  }, 120_000);

  it('the bucket away for good once the paid result is there: the write gives up, counts a lapse, and the job ends failed and refunded, the provider paid once', async () => {
    const { s3, schema, api, id } = await chargedJobOnS3();
    const { provider, calls, called, openGate } = countingProvider(true);
    const log: string[] = [];
    // One lapse ends a job here: the write's ~45 s of tries under the lease, then the give-up.
    await service(schema, 1, provider, s3.blobsUrl, { log, maxInterruptions: 1 });
    await called;
    await s3.stop();
    openGate();

    const { job, ledger } = await settled(api, id, 90_000);

    // Without the lapse the job was run again after each give-up, the provider paid each time.
    expect(job.status, log.join('\n')).toBe('failed');
    expect(calls(), log.join('\n')).toBe(1);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(1);
    expect(job.errorMessage ?? '').not.toContain(s3.endpoint);
  }, 150_000);
});
