/**
 * A `run` stopped by its signal while it waits for the batch leaves nothing behind: the wait's
 * timer and listeners go with it, so once the engine is closed no timer reads the closed
 * database (it threw "The database connection is not open" a second later, uncaught). Against
 * the reference /v1 service on loopback, with a job long enough that the run is still waiting.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import * as store from '../../src/studio/db/store';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { startReferenceService } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const onModel: Recipe = {
  request: {
    toolId: 'virtual_model',
    images: { fashion_model: 'person-001', garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

it('a run aborted while it waits for its batch, then closed, leaves no timer that reads the database', async () => {
  const errors: unknown[] = [];
  const heard = (err: unknown) => errors.push(err);
  process.on('uncaughtException', heard);
  process.on('unhandledRejection', heard);
  cleanups.push(() => {
    process.off('uncaughtException', heard);
    process.off('unhandledRejection', heard);
  });
  const timersBefore = timeouts();

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-run-abort-close-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  // A job of 60 s: the run is still waiting for it when it is stopped.
  const service = await startReferenceService({ seed: 3, timeScale: 1, jobSeconds: [60, 60] });
  const { apiKey } = service.createAccount({ email: 'abort@ref.test', diamonds: 100 });
  const inDir = path.join(root, 'in');
  fs.mkdirSync(inDir);
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#3b6e8f' } })
    .jpeg()
    .toFile(path.join(inDir, 'p1.jpg'));
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({ dataDir: path.join(root, 'data'), client, apiKey });

  const stop = new AbortController();
  const running = runBatch(engine, {
    inDir,
    recipe: onModel,
    outDir: path.join(root, 'out'),
    signal: stop.signal,
  });
  // Submitted and polled: the run waits for the job (its wait ticks every second).
  const processing = () =>
    store
      .listItems(engine.db, { limit: 10, offset: 0 })
      .items.some((i) => i.state === 'processing');
  for (let waited = 0; !processing(); waited += 50) {
    expect(waited).toBeLessThan(20_000);
    await sleep(50);
  }
  await sleep(1200);
  stop.abort('SIGINT');
  const summary = await running;
  expect(summary.interrupted?.signal).toBe('SIGINT');
  await engine.close();
  await client.close();
  await service.close();

  // Two ticks of the wait's 1 s timer, had it stayed.
  await sleep(2000);
  expect(errors).toEqual([]);
  expect(timeouts()).toBeLessThanOrEqual(timersBefore);
}, 60_000);
