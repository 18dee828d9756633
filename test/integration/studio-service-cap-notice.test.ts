/**
 * `run`'s closing notice at the service's cap as remembered (issue 10, left over) names the cap
 * that held the photos back: the service's, as its 429 named it on an earlier day, not the
 * configured `--daily-cap` (500 here), whether the day closed at the kept request or admission held
 * the photos that no longer fit. Against the reference /v1 service (written from the spec alone);
 * the process's clock is moved a day on between the day the cap is learned and the day it is used.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { CUTOUT_RECIPE, plainPhotos, shiftableClock } from './helpers/studio-fixtures';
import { startReferenceService } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it('names the service’s remembered cap, not --daily-cap, when photos are left for tomorrow', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-cap-notice-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 9, timeScale: 0.02, jobSeconds: [5, 10] });
  cleanups.push(() => service.close());
  const cap = 20;
  const { apiKey } = service.createAccount({
    email: 'notice@ref.test',
    diamonds: 500,
    dailyCap: cap,
  });
  const dataDir = path.join(root, 'data');
  const inDir = path.join(root, 'in');
  await plainPhotos(inDir, 'p', 10);

  // Day 1: balance reads until the service's daily-cap 429; the studio remembers the cap it named.
  {
    const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
    const engine = new StudioEngine({ dataDir, client, apiKey });
    while ((await engine.spending.setAnchor()) !== null);
    await engine.close();
    await client.close();
  }

  // Day 2: ten photos at about 3 requests each do not fit in 20.
  shiftableClock((undo) => cleanups.push(undo)).nextDay();
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const engine = new StudioEngine({ dataDir, client, apiKey, dailyCap: 500, capProbeMs: 300 });
  cleanups.push(() => engine.close());
  const summary = await runBatch(engine, {
    inDir,
    recipe: CUTOUT_RECIPE,
    outDir: path.join(root, 'out'),
  });
  expect(summary.exported).toBeGreaterThan(0);
  expect(summary.exported).toBeLessThan(10);
  const closing = summary.notices!.filter((n) => n.startsWith('daily request cap reached'));
  expect(closing).toHaveLength(1);
  expect(closing[0]).toContain(`the service's daily cap of ${cap}`);
  expect(closing[0]).not.toContain('--daily-cap');
  // The service refused nothing it counted beyond the one request after the closing read.
  expect(service.requestsToday(apiKey)).toBeLessThanOrEqual(cap + 1);
  // Each photo left says once why it was not started.
  const notStarted = summary.held.filter((h) => h.reason.includes('not started'));
  expect(notStarted.length).toBe(10 - summary.exported - (summary.collectTomorrow?.length ?? 0));
  for (const h of notStarted) expect(h.reason.match(/not started/g)).toHaveLength(1);
}, 90_000);
