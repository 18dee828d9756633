/**
 * A catalog job's `resultUrls` "fills in as shots complete" (spec 2.3); the final status of a
 * catalog job is not shown. A service may list each shot's URL only in the answer where that shot
 * completes, its final answer listing only the shots not listed before (review rev15 C2: 12
 * charged, 0 exported, reruns found nothing). Every URL an answer lists is kept, stored so that a
 * restart keeps it, and all are collected at the end. Against the reference /v1 service (written
 * from the spec alone, catalogUrlsListedOnce) on loopback, through `run`'s own path.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import * as store from '../../src/studio/db/store';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { startReferenceService, type ReferenceService } from '../reference-service';
import { SHOOT_02_RECIPE, shapePhotos } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'listed-once@ref.test';

async function world(tag: string) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-${tag}-`));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  // Shots done 1 to 6 s apart, each listed once: polled every 300 ms, they come in several answers.
  const service = await startReferenceService({
    seed: 5,
    timeScale: 0.01,
    jobSeconds: [100, 600],
    catalogStatus: 'pack',
    catalogUrlsListedOnce: true,
  });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 100 });
  await shapePhotos(path.join(root, 'in'), 1);
  return { root, service, apiKey };
}

async function runOnce(
  service: ReferenceService,
  apiKey: string,
  root: string,
  stopWhen?: (items: store.ItemRow[]) => boolean,
) {
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({
    dataDir: path.join(root, 'data'),
    client,
    apiKey,
    maxPollGapMs: 300,
    backoff: { baseMs: 100, maxMs: 400 },
  });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('SIGTERM'), 40_000);
  const watch = setInterval(() => {
    if (stopWhen?.(store.listItems(engine.db, { limit: 100, offset: 0 }).items))
      stop.abort('SIGTERM');
  }, 50);
  try {
    return await runBatch(engine, {
      inDir: path.join(root, 'in'),
      recipe: SHOOT_02_RECIPE,
      outDir: path.join(root, 'out'),
      signal: stop.signal,
    });
  } finally {
    clearTimeout(timer);
    clearInterval(watch);
    await engine.close();
    await client.close();
  }
}

const charged = (service: ReferenceService) =>
  -service
    .ledger(EMAIL)
    .filter((e) => e.kind === 'charge' || e.kind === 'refund')
    .reduce((sum, e) => sum + e.delta, 0);

it('collects every shot a catalog job listed once, where it completed, in the same run', async () => {
  const { root, service, apiKey } = await world('listed-once');
  const summary = await runOnce(service, apiKey, root);
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
  const { root, service, apiKey } = await world('listed-once-restart');
  // Stopped (as by SIGTERM) once an answer showed a shot completed (and listed its URL) while
  // the job still runs.
  const first = await runOnce(
    service,
    apiKey,
    root,
    (items) =>
      items.some((i) => i.state === 'processing' && (i.packCompleted ?? 0) >= 1) &&
      (service.jobs(EMAIL)[0]?.results ?? 0) < 3,
  );
  expect(first.interrupted?.signal).toBe('SIGTERM');
  expect(first.exported).toBe(0);
  const second = await runOnce(service, apiKey, root);
  // Before the fix: the shots listed to the stopped run were lost (partial, or paid without results).
  expect(second.files).toHaveLength(3);
  expect(second.partial).toBeUndefined();
  expect(second.failed).toEqual([]);
  expect(second.diamondsSpent).toBe(0);
  expect(charged(service)).toBe(9);
  expect(service.jobs(EMAIL)).toHaveLength(1);
}, 60_000);
