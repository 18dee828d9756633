/**
 * Result files of paid jobs that cannot be downloaded at once (review rev15 F3, T1). An object
 * store or CDN may answer 404 for a while after the job is reported complete: the file is asked
 * again with back-off over a window, and collected in the same run; one still refused after the
 * window is held as paid for the next run, never listed as failed. Downloads cut short every time
 * (Content-Length over the body) are tried a bounded number of times, then held, and the run ends.
 * Against the reference /v1 service (written from the spec alone) on loopback, through `run`'s own
 * path (HttpClient, StudioEngine, runBatch); each run stopped after 40 s if it has not ended.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import * as store from '../../src/studio/db/store';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { RESULT_NOT_YET_WINDOW_MS } from '../../src/studio/result-download';
import {
  startReferenceService,
  type ReferenceService,
  type ReferenceServiceOptions,
} from '../reference-service';
import { CUTOUT_RECIPE, shapePhotos } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'late-files@ref.test';

async function world(tag: string, photos: number, options: ReferenceServiceOptions) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-${tag}-`));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({
    seed: 7,
    timeScale: 0.01,
    jobSeconds: [50, 100],
    ...options,
  });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 100 });
  await shapePhotos(path.join(root, 'in'), photos);
  return { root, service, apiKey };
}

/**
 * One `run`. `clock.ahead` moves the studio's clock (never the service's) on, as when the window
 * has passed; `onTick` looks at the studio's items every 100 ms while the run goes.
 */
async function runOnce(
  service: ReferenceService,
  apiKey: string,
  root: string,
  opts: {
    clock?: { ahead: number };
    onTick?: (items: store.ItemRow[]) => void;
  } = {},
) {
  const clock = opts.clock ?? { ahead: 0 };
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({
    dataDir: path.join(root, 'data'),
    client,
    apiKey,
    now: () => new Date(Date.now() + clock.ahead),
    backoff: { baseMs: 100, maxMs: 400 },
  });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('SIGTERM'), 40_000);
  const watch = setInterval(
    () => opts.onTick?.(store.listItems(engine.db, { limit: 100, offset: 0 }).items),
    100,
  );
  const lines: string[] = [];
  const startedAt = Date.now();
  try {
    const summary = await runBatch(engine, {
      inDir: path.join(root, 'in'),
      recipe: CUTOUT_RECIPE,
      outDir: path.join(root, 'out'),
      signal: stop.signal,
      progressEveryMs: 1_000,
      onNotice: (line) => lines.push(line),
    });
    const items = store.listItems(engine.db, { limit: 100, offset: 0 }).items;
    return { summary, lines, items, ms: Date.now() - startedAt };
  } finally {
    clearTimeout(timer);
    clearInterval(watch);
    await engine.close();
    await client.close();
  }
}

const charges = (service: ReferenceService) =>
  service.ledger(EMAIL).filter((e) => e.kind === 'charge').length;

it('result files answering 404 for 3 s after the job completed are asked again and collected in the same run', async () => {
  const { root, service, apiKey } = await world('files-not-yet', 3, {
    resultFilesNotYetMs: 3_000,
  });
  const run = await runOnce(service, apiKey, root);
  expect(run.summary.interrupted).toBeUndefined();
  // Before the fix: each file tried twice within a second, the 3 paid photos failed with the 404.
  expect(run.summary.failed).toEqual([]);
  expect(run.summary.held).toEqual([]);
  expect(run.summary.exported).toBe(3);
  expect(charges(service)).toBe(3);
  const refused = service.resultRequests().filter((r) => r.status === 404).length;
  expect(refused).toBeGreaterThan(0);
  // Asked again with back-off (from 1 s), not in a burst; no fresh-URL poll was spent on it.
  expect(refused).toBeLessThanOrEqual(3 * 4);
}, 60_000);

it('result files still refused when the window is over: held as paid, not failed; the next run collects them at no charge', async () => {
  const { root, service, apiKey } = await world('files-never', 2, {
    resultFilesNotYetMs: 3_600_000,
  });
  const clock = { ahead: 0 };
  const first = await runOnce(service, apiKey, root, {
    clock,
    // Once every file has been refused as not readable yet, the studio's clock passes the window.
    onTick: (items) => {
      if (
        clock.ahead === 0 &&
        items.length === 2 &&
        items.every((i) => i.error?.includes('most likely not readable yet'))
      )
        clock.ahead = RESULT_NOT_YET_WINDOW_MS + 1_000;
    },
  });
  // Before the fix: listed under failed with the raw 404.
  expect(first.summary.failed).toEqual([]);
  expect(clock.ahead).toBeGreaterThan(0);
  expect(first.summary.interrupted).toBeUndefined();
  expect(first.summary.exported).toBe(0);
  expect(first.summary.held).toHaveLength(2);
  for (const held of first.summary.held)
    expect(held.reason).toMatch(
      /^paid \(job .+\); result 1 of job .+ refused: download of .+ answered 404.*the next run collects it at no new charge$/,
    );
  expect(
    first.lines.some((l) => /^2 paid photo\(s\) whose results could not be downloaded/.test(l)),
  ).toBe(true);
  expect(charges(service)).toBe(2);
  for (const item of first.items) expect(store.isPaid(item)).toBe(true);

  // The object store catches up; the next run downloads both from the same jobs, paying nothing.
  service.setOptions({ resultFilesNotYetMs: 1 });
  const second = await runOnce(service, apiKey, root, { clock });
  expect(second.summary.exported).toBe(2);
  expect(second.summary.failed).toEqual([]);
  expect(second.summary.held).toEqual([]);
  expect(second.summary.diamondsSpent).toBe(0);
  expect(charges(service)).toBe(2);
}, 90_000);

it('every result download cut short: tried a bounded number of times, held for the next run, and the run ends', async () => {
  const { root, service, apiKey } = await world('files-cut', 2, { truncateResultBodies: -1 });
  const first = await runOnce(service, apiKey, root);
  // Before the fix: retried for ever, stopped only by the 40 s SIGTERM.
  expect(first.summary.interrupted).toBeUndefined();
  expect(first.ms).toBeLessThan(30_000);
  expect(first.summary.exported).toBe(0);
  expect(first.summary.failed).toEqual([]);
  expect(first.summary.held).toHaveLength(2);
  for (const held of first.summary.held)
    expect(held.reason).toMatch(
      /^paid \(job .+\); result 1 of job .+ failed 6 times: could not download/,
    );
  expect(service.resultRequests().length).toBe(2 * 6);
  expect(charges(service)).toBe(2);

  service.setOptions({ truncateResultBodies: 0 });
  const second = await runOnce(service, apiKey, root);
  expect(second.summary.exported).toBe(2);
  expect(second.summary.held).toEqual([]);
  expect(second.summary.diamondsSpent).toBe(0);
  expect(charges(service)).toBe(2);
}, 90_000);
