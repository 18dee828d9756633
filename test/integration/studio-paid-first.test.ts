/**
 * A new UTC day with a low daily cap, paid jobs still running from the day before and new photos
 * queued (issue 10): collecting what was paid for comes first. New photos are started only with
 * the requests left after every paid job's expected polls, so all paid jobs are collected that day
 * and the service never sees more than the cap. Against the reference /v1 service (written from
 * the spec alone); the studio's clock crosses 00:00 UTC while the jobs run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import * as store from '../../src/studio/db/store';
import { StudioEngine } from '../../src/studio/engine';
import { CUTOUT_RECIPE, fileSha256, plainPhotos } from './helpers/studio-fixtures';
import { startReferenceService } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'paid-first@example.com';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a new day with paid jobs still running and few requests', () => {
  it('collects every paid job that day; new photos take only what is left; the service sees no more than the cap', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-paid-first-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    // Jobs of 12-18 s: still running when the studio's day turns, 10 s after they are submitted.
    const service = await startReferenceService({ seed: 11, timeScale: 0.2, jobSeconds: [60, 90] });
    cleanups.push(() => service.close());
    const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 100 });
    const cap = 20;
    const paidCount = 5;
    const newCount = 8;
    // The studio's clock: 23:59:50 UTC now, so the day turns while the first jobs run.
    const midnight = Date.UTC(2026, 2, 10);
    const offset = midnight - 10_000 - Date.now();
    const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 10_000 });
    const engine = new StudioEngine({
      dataDir: path.join(root, 'data'),
      client,
      apiKey,
      dailyCap: cap,
      // Every photo of the day before is started in one go.
      concurrency: 8,
      capProbeMs: 60_000,
      now: () => new Date(Date.now() + offset),
    });
    cleanups.push(async () => {
      await engine.close();
      await client.close();
    });
    const queue = (files: string[], dir: string) => {
      const batchId = engine.createBatch({
        kind: 'folder',
        outputDir: path.join(root, 'out'),
        autoApprove: true,
      });
      return files.map(
        (file) =>
          engine.enqueue({
            batchId,
            sourcePath: file,
            rootDir: dir,
            sha256: fileSha256(file),
            recipe: CUTOUT_RECIPE,
          }).id,
      );
    };
    const items = (ids: string[]) => ids.map((id) => store.getItem(engine.db, id)!);

    const firstDir = path.join(root, 'day1');
    const paidIds = queue(await plainPhotos(firstDir, 'paid', paidCount, 40, 60), firstDir);
    engine.start();
    const charged = Date.now() + 9_000;
    while (items(paidIds).some((i) => i.state !== 'processing') && Date.now() < charged)
      await sleep(50);
    // Precondition: all of them charged before the studio's midnight, and still running at the service.
    expect(engine.now().getTime()).toBeLessThan(midnight);
    expect(service.jobs(EMAIL).filter((j) => j.status === 'processing')).toHaveLength(paidCount);

    while (engine.now().getTime() < midnight) await sleep(50);
    const day1 = new Date(midnight - 1).toISOString().slice(0, 10);
    const secondDir = path.join(root, 'day2');
    const newIds = queue(await plainPhotos(secondDir, 'new', newCount, 40), secondDir);

    // Until every item is delivered or waits for the next day, and nothing is in flight for a
    // while (a photo held back is started as soon as the paid jobs leave enough requests).
    const settled = () =>
      engine.running.size + engine.polling.size === 0 &&
      items([...paidIds, ...newIds]).every(
        (i) => i.state === 'exported' || i.state === 'failed' || i.waitReason === 'daily_cap',
      );
    const deadline = Date.now() + 150_000;
    let quiet = 0;
    while (quiet < 3 && Date.now() < deadline) {
      quiet = settled() ? quiet + 1 : 0;
      await sleep(500);
    }
    await engine.stop();

    const sentDay1 = store.requestsOn(engine.db, engine.spending.key, day1);
    const sentDay2 = engine.spending.requestsUsedToday();
    console.log(
      'DIAG',
      sentDay1,
      sentDay2,
      items([...paidIds, ...newIds])
        .map((i) => `${i.name}:${i.state}:${i.waitReason}`)
        .join(' '),
    );
    // Every job paid for, the day before or on the new day, was collected on the new day.
    const paid = items([...paidIds, ...newIds]).filter((i) => i.jobId !== null);
    expect(paid.map((i) => `${i.name} ${i.state}`)).toEqual(paid.map((i) => `${i.name} exported`));
    // The new photos used what was left: at least one delivered, the others wait for the next
    // day, not started.
    const fresh = items(newIds);
    expect(fresh.filter((i) => i.state === 'exported').length).toBeGreaterThan(0);
    for (const i of fresh)
      if (i.state !== 'exported')
        expect(i).toMatchObject({ jobId: null, state: 'queued', waitReason: 'daily_cap' });
    // No more than the cap on the new day, exactly as counted.
    expect(sentDay2).toBeLessThanOrEqual(cap);
    expect(service.requestsToday(apiKey)).toBe(sentDay1 + sentDay2);
    // Each photo charged once.
    const exported = items([...paidIds, ...newIds]).filter((i) => i.state === 'exported');
    expect(service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(exported.length);
  }, 200_000);
});
