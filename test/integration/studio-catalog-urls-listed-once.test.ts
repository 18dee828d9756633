/**
 * A catalog job's `resultUrls` "fills in as shots complete" (spec 2.3); the final status of a
 * catalog job is not shown. A service may list each shot's URL only in the answer where that shot
 * completes, its final answer listing only the shots not listed before (review rev15 C2: 12
 * charged, 0 exported, reruns found nothing). Every URL an answer lists is kept, stored so that a
 * restart keeps it, and all are collected at the end. Against the reference /v1 service (written
 * from the spec alone, catalogUrlsListedOnce) on loopback, through `run`'s own path.
 */
import { afterEach, expect, it } from 'vitest';
import type * as store from '../../src/studio/db/store';
import type { ReferenceService } from '../reference-service';
import {
  referenceWorld,
  runToldOnWorld,
  stopAfter,
  type ReferenceWorld,
} from './helpers/reference-studio';
import { SHOOT_02_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'listed-once@ref.test';

// Shots done 1 to 6 s apart, each listed once: polled every 300 ms, they come in several answers.
const world = () =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: {
      seed: 5,
      timeScale: 0.01,
      jobSeconds: [100, 600],
      catalogStatus: 'pack',
      catalogUrlsListedOnce: true,
    },
  });

/** One `run` of the ready shoot, stopped (as by SIGTERM) once `stopWhen` holds, or after 40 s. */
async function runOnce(w: ReferenceWorld, stopWhen?: (items: store.ItemRow[]) => boolean) {
  const stop = new AbortController();
  const deadline = stopAfter(cleanups, 40_000);
  deadline.addEventListener('abort', () => stop.abort('SIGTERM'));
  const { summary } = await runToldOnWorld(w, {
    recipe: SHOOT_02_RECIPE,
    concurrency: 4,
    backoff: { baseMs: 100, maxMs: 400 },
    engine: { maxPollGapMs: 300 },
    signal: stop.signal,
    onTick: (items) => {
      if (stopWhen?.(items)) stop.abort('SIGTERM');
    },
  });
  return summary;
}

const charged = (service: ReferenceService) =>
  -service
    .ledger(EMAIL)
    .filter((e) => e.kind === 'charge' || e.kind === 'refund')
    .reduce((sum, e) => sum + e.delta, 0);

it('collects every shot a catalog job listed once, where it completed, in the same run', async () => {
  const w = await world();
  const { service } = w;
  const summary = await runOnce(w);
  expect(summary.interrupted).toBeUndefined();
  // Before the fix: only the shots the final answer listed (1 of 3), exported `partial`.
  expect(summary.files).toHaveLength(3);
  expect(summary.partial).toBeUndefined();
  expect(summary.failed).toEqual([]);
  expect(summary.exported).toBe(1);
  expect(charged(service)).toBe(9);
  expect(service.jobs(EMAIL)).toHaveLength(1);
}, 60_000);

it('keeps the URLs listed before a restart: the next run collects every shot at no charge', async () => {
  const w = await world();
  const { service } = w;
  // Stopped (as by SIGTERM) once an answer showed a shot completed (and listed its URL) while
  // the job still runs.
  const first = await runOnce(
    w,
    (items) =>
      items.some((i) => i.state === 'processing' && (i.packCompleted ?? 0) >= 1) &&
      (service.jobs(EMAIL)[0]?.results ?? 0) < 3,
  );
  expect(first.interrupted?.signal).toBe('SIGTERM');
  expect(first.exported).toBe(0);
  const second = await runOnce(w);
  // Before the fix: the shots listed to the stopped run were lost (partial, or paid without results).
  expect(second.files).toHaveLength(3);
  expect(second.partial).toBeUndefined();
  expect(second.failed).toEqual([]);
  expect(second.diamondsSpent).toBe(0);
  expect(charged(service)).toBe(9);
  expect(service.jobs(EMAIL)).toHaveLength(1);
}, 60_000);
