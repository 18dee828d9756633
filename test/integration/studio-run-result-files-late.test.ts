/**
 * Result files of paid jobs that cannot be downloaded at once (review rev15 F3, T1). An object
 * store or CDN may answer 404 for a while after the job is reported complete: the file is asked
 * again with back-off over a window, and collected in the same run; one still refused after the
 * window is held as paid for the next run, never listed as failed. Downloads cut short every time
 * (Content-Length over the body) are tried a bounded number of times, then held, and the run ends.
 * Against the reference /v1 service (written from the spec alone) on loopback, through `run`'s own
 * path (HttpClient, StudioEngine, runBatch); each run stopped after 40 s if it has not ended.
 */
import { afterEach, expect, it } from 'vitest';
import * as store from '../../src/studio/db/store';
import { RESULT_NOT_YET_WINDOW_MS } from '../../src/studio/result-download';
import type { ReferenceService, ReferenceServiceOptions } from '../reference-service';
import {
  referenceWorld,
  runToldOnWorld,
  stopAfter,
  type ReferenceWorld,
} from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'late-files@ref.test';

const world = (photos: number, options: ReferenceServiceOptions) =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 7, timeScale: 0.01, jobSeconds: [50, 100], ...options },
    photos,
  });

/**
 * One `run`. `clock.ahead` moves the studio's clock (never the service's) on, as when the window
 * has passed; `onTick` looks at the studio's items every 100 ms while the run goes.
 */
async function runOnce(
  w: ReferenceWorld,
  opts: { clock?: { ahead: number }; onTick?: (items: store.ItemRow[]) => void } = {},
) {
  const clock = opts.clock ?? { ahead: 0 };
  const told = await runToldOnWorld(w, {
    concurrency: 4,
    backoff: { baseMs: 100, maxMs: 400 },
    engine: { now: () => new Date(Date.now() + clock.ahead) },
    signal: stopAfter(cleanups, 40_000),
    progressEveryMs: 1_000,
    ...(opts.onTick ? { onTick: opts.onTick } : {}),
  });
  return { ...told, lines: told.lines.map((l) => l.line) };
}

const charges = (service: ReferenceService) =>
  service.ledger(EMAIL).filter((e) => e.kind === 'charge').length;

it('result files answering 404 for 3 s after the job completed are asked again and collected in the same run', async () => {
  const w = await world(3, {
    resultFilesNotYetMs: 3_000,
  });
  const { service } = w;
  const run = await runOnce(w);
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
  const w = await world(2, {
    resultFilesNotYetMs: 3_600_000,
  });
  const { service } = w;
  const clock = { ahead: 0 };
  const first = await runOnce(w, {
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
  const second = await runOnce(w, { clock });
  expect(second.summary.exported).toBe(2);
  expect(second.summary.failed).toEqual([]);
  expect(second.summary.held).toEqual([]);
  expect(second.summary.diamondsSpent).toBe(0);
  expect(charges(service)).toBe(2);
}, 90_000);

it('every result download cut short: tried a bounded number of times, held for the next run, and the run ends', async () => {
  const w = await world(2, { truncateResultBodies: -1 });
  const { service } = w;
  const first = await runOnce(w);
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
  const second = await runOnce(w);
  expect(second.summary.exported).toBe(2);
  expect(second.summary.held).toEqual([]);
  expect(second.summary.diamondsSpent).toBe(0);
  expect(charges(service)).toBe(2);
}, 90_000);
