/**
 * A job the service keeps `processing` for ever (a stuck worker) must not keep `dropshoot run`
 * going for ever in silence (review rev12 D10: stopped by hand after 240 s, nothing printed).
 * `run` says now and then what it waits for, stops waiting on a job after its bound, and ends
 * listing the job as paid and still processing; nothing is failed or forgotten, and the next run,
 * once the service has recovered, collects it without paying again. Against the reference /v1
 * service (written from the spec alone) on loopback, through `run`'s own path (HttpClient,
 * StudioEngine, runBatch); each run stopped after 30 s if it has not ended.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { BatchSummary } from '../../src/studio/run-batch';
import { HttpClient } from '../../src/client';
import * as store from '../../src/studio/db/store';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { readJobs, readLedger, runCli, startServiceProcess } from '../soak/processes';
import {
  referenceWorld,
  runToldOnWorld,
  stopAfter,
  type ReferenceWorld,
} from './helpers/reference-studio';
import { CUTOUT_RECIPE, shapePhotos } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'stuck@ref.test';
const PHOTOS = 2;
const GIVE_UP_MS = 4_000;
const PROGRESS_MS = 1_000;

/** A world with `photos` photos and a reference service whose jobs never finish. */
const stuckWorld = (photos: number) =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 5, timeScale: 0.01, jobSeconds: [100, 150], jobsStayProcessing: true },
    photos,
  });

/** One run at the engine's own back-off, stopped after 30 s if it has not ended. */
const runOnce = (world: ReferenceWorld) =>
  runToldOnWorld(world, {
    backoff: { baseMs: 1000, maxMs: 60_000 },
    concurrency: 4,
    signal: stopAfter(cleanups, 30_000),
    giveUpAfterMs: GIVE_UP_MS,
    progressEveryMs: PROGRESS_MS,
  });

it('a job processing for ever: run says what it waits for, gives up after its bound, and the next run collects it at no charge', async () => {
  const world = await stuckWorld(PHOTOS);
  const { service } = world;

  const first = await runOnce(world);
  // It ended by itself, not by the 30 s stop, soon after its bound.
  expect(first.summary.interrupted).toBeUndefined();
  expect(first.ms).toBeLessThan(GIVE_UP_MS + 10_000);
  // While it waited it said so, more than once, before giving up.
  const waiting = first.lines.filter((l) =>
    /^waiting for 2 job\(s\) still processing at the service, the longest for \d+ s/.test(l.line),
  );
  expect(waiting.length, JSON.stringify(first.lines)).toBeGreaterThanOrEqual(2);
  const gaveUp = first.lines.findIndex((l) => l.line.includes('stopped waiting'));
  expect(gaveUp, JSON.stringify(first.lines)).toBeGreaterThan(-1);
  expect(first.lines.indexOf(waiting[0]!)).toBeLessThan(gaveUp);
  // The summary: nothing exported, nothing failed or uncertain; both paid and still processing.
  const jobs = service.jobs(EMAIL);
  expect(jobs.map((j) => j.status)).toEqual(['processing', 'processing']);
  expect(first.summary.exported).toBe(0);
  expect(first.summary.failed).toEqual([]);
  expect(first.summary.uncertain).toEqual([]);
  expect(first.summary.stillProcessing?.map((s) => s.jobId).sort()).toEqual(
    jobs.map((j) => j.id).sort(),
  );
  expect(first.summary.held).toHaveLength(PHOTOS);
  for (const held of first.summary.held)
    expect(held.reason).toMatch(/^paid \(job .+\); still processing at the service/);
  expect(first.summary.diamondsSpent).toBe(PHOTOS);
  expect(first.summary.diamondsOnUncollectedJobs).toBe(PHOTOS);
  // The studio's durable state keeps both jobs, collectable.
  for (const item of first.items) {
    expect(item.state).toBe('processing');
    expect(item.jobId).not.toBeNull();
  }

  // The service recovers; the next run collects both jobs and pays nothing more.
  service.setOptions({ jobsStayProcessing: false });
  const second = await runOnce(world);
  expect(second.summary.interrupted).toBeUndefined();
  expect(second.summary.exported).toBe(PHOTOS);
  expect(second.summary.failed).toEqual([]);
  expect(second.summary.diamondsSpent).toBe(0);
  expect(service.jobs(EMAIL)).toHaveLength(PHOTOS);
  const charges = service.ledger(EMAIL).filter((e) => e.kind === 'charge');
  expect(charges).toHaveLength(PHOTOS);
}, 90_000);

it('`dropshoot run --give-up-after`: tells the wait on stderr, ends with exit 1 listing the job, and the next run collects it (exit 0, no new charge)', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-cli-gives-up-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startServiceProcess({
    statePath: path.join(root, 'service.json'),
    options: { seed: 5, timeScale: 0.01, jobSeconds: [100, 150], jobsStayProcessing: true },
    token: 'gives-up',
    log: [],
  });
  cleanups.push(() => service.stop('SIGTERM'));
  const { apiKey } = await service.admin<{ apiKey: string }>('POST', 'accounts', {
    email: EMAIL,
    diamonds: 100,
  });
  await shapePhotos(path.join(root, 'in'), 1);
  const recipe = path.join(root, 'recipe.json');
  fs.writeFileSync(recipe, JSON.stringify(CUTOUT_RECIPE));
  const args = ['--in', path.join(root, 'in'), '--recipe', recipe, '--out', path.join(root, 'out')];
  const run = () =>
    runCli(
      [
        ...args,
        '--data',
        path.join(root, 'data'),
        '--remote',
        service.url,
        '--key',
        apiKey,
        '--give-up-after',
        '0.1',
      ],
      { killAtMs: null, timeoutMs: 60_000 },
    );
  const summaryOf = (stdout: string) =>
    JSON.parse(stdout.trim().split('\n').pop()!) as BatchSummary;

  const first = await run();
  expect(first.timedOut).toBe(false);
  expect(first.code, first.stderr).toBe(1);
  expect(first.stderr).toMatch(
    /^dropshoot: waiting for 1 job\(s\) still processing at the service, the longest for \d+ s; this run stops waiting on a job after 6 s \(--give-up-after\)/m,
  );
  expect(first.stderr).toMatch(/^dropshoot: stopped waiting on 1 paid job\(s\) still processing/m);
  const [job] = await readJobs(service, EMAIL);
  expect(summaryOf(first.stdout).stillProcessing).toEqual([
    { name: 'p00.jpg', jobId: job!.id, processingMinutes: 0 },
  ]);

  await service.admin('POST', 'options', { jobsStayProcessing: false });
  const second = await run();
  expect(second.code, second.stderr).toBe(0);
  expect(summaryOf(second.stdout)).toMatchObject({ exported: 1, diamondsSpent: 0 });
  expect((await readLedger(service, EMAIL)).filter((e) => e.kind === 'charge')).toHaveLength(1);
}, 120_000);

it('run --wait: a paid job waiting for a closed day is not given up on; once the day reopens it is collected', async () => {
  const { root, service, apiKey, inDir } = await stuckWorld(1);
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  // A probe each second sees the cap raised (the day reopens) without waiting for 00:00 UTC.
  const engine = new StudioEngine({
    dataDir: path.join(root, 'data'),
    client,
    apiKey,
    capProbeMs: 1_000,
  });
  cleanups.push(async () => {
    await engine.close();
    await client.close();
  });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('SIGTERM'), 40_000);
  cleanups.push(() => clearTimeout(timer));
  const running = runBatch(engine, {
    inDir,
    recipe: CUTOUT_RECIPE,
    outDir: path.join(root, 'out'),
    signal: stop.signal,
    wait: true,
    giveUpAfterMs: 2_000,
    progressEveryMs: 500,
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  while (service.jobs(EMAIL).length === 0) await sleep(50);
  // The paid job's next poll meets the service's daily cap: the day closes with the job in it.
  service.setDailyCap(apiKey, service.requestsToday(apiKey));
  const capped = () =>
    store
      .listItems(engine.db, { limit: 10, offset: 0 })
      .items.some((i) => i.state === 'processing' && i.waitReason === 'daily_cap');
  for (let waited = 0; !capped(); waited += 50) {
    expect(waited).toBeLessThan(15_000);
    await sleep(50);
  }
  service.setOptions({ jobsStayProcessing: false });
  // Twice the bound spent waiting for the day, then the cap is raised.
  await sleep(4_000);
  service.setDailyCap(apiKey, 500);
  const summary = await running;
  expect(summary.interrupted).toBeUndefined();
  expect(summary.stillProcessing).toBeUndefined();
  expect(summary.exported).toBe(1);
  expect(service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(1);
}, 60_000);
