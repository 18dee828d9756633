/**
 * `run`'s "photos that fit today" notice on a day that starts with paid jobs still running
 * (resumed from the day before) and a low --daily-cap (issue 10 item 7): the scheduler keeps every
 * poll those jobs are expected to need before it starts a new photo, so the notice counts only the
 * requests left after them, and never promises more photos than the day starts. Against the
 * reference /v1 service (written from the spec alone).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import * as store from '../../src/studio/db/store';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { CUTOUT_RECIPE, fileSha256, plainPhotos } from './helpers/studio-fixtures';
import { startReferenceService } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'fit-today@example.com';
const DAY_MS = 86_400_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('photos that fit today, with paid jobs still running', () => {
  it('the notice subtracts the polls kept for the paid jobs, and the day starts at least the photos it said fit', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-fit-today-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    // Jobs of 12-18 s: still running when the next day's run starts.
    const service = await startReferenceService({ seed: 11, timeScale: 0.2, jobSeconds: [60, 90] });
    cleanups.push(() => service.close());
    const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 100 });
    const cap = 20;
    const paidCount = 5;
    const newCount = 8;
    const dataDir = path.join(root, 'data');
    const outDir = path.join(root, 'out');

    // Yesterday (the studio's clock a day back): five photos charged, the studio then closed
    // while their jobs still run.
    const yesterday = new StudioEngine({
      dataDir,
      client: new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 10_000 }),
      apiKey,
      dailyCap: cap,
      concurrency: 8,
      now: () => new Date(Date.now() - DAY_MS),
    });
    const firstDir = path.join(root, 'day1');
    const batchId = yesterday.createBatch({ kind: 'folder', outputDir: outDir, autoApprove: true });
    const paidIds = (await plainPhotos(firstDir, 'paid', paidCount, 30, 60)).map(
      (file) =>
        yesterday.enqueue({
          batchId,
          sourcePath: file,
          rootDir: firstDir,
          sha256: fileSha256(file),
          recipe: CUTOUT_RECIPE,
        }).id,
    );
    yesterday.start();
    const charged = Date.now() + 9_000;
    const paid = () => paidIds.map((id) => store.getItem(yesterday.db, id)!);
    while (paid().some((i) => i.state !== 'processing') && Date.now() < charged) await sleep(50);
    expect(service.jobs(EMAIL).filter((j) => j.status === 'processing')).toHaveLength(paidCount);
    await yesterday.close();
    await yesterday.client.close();

    // Today: `run` over new photos on the same data folder; the paid jobs resume with it.
    const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 10_000 });
    const engine = new StudioEngine({ dataDir, client, apiKey, dailyCap: cap, concurrency: 8 });
    cleanups.push(async () => {
      await engine.close();
      await client.close();
    });
    const secondDir = path.join(root, 'day2');
    await plainPhotos(secondDir, 'new', newCount);
    const summary = await runBatch(engine, { inDir: secondDir, recipe: CUTOUT_RECIPE, outDir });

    const plan = summary.notices?.find((n) => n.startsWith('requests left today'));
    expect(plan).toMatch(/kept to collect 5 paid job\(s\) still running/);
    const m = /: (\d+) of (\d+) photo\(s\) fit today$/.exec(plan ?? '');
    expect(m?.[2]).toBe(String(newCount));
    const fit = Number(m?.[1]);
    // The new photos the day started (charged): never fewer than the notice said would fit.
    const items = store.listItems(engine.db, {
      batchId: summary.batchId,
      limit: 100,
      offset: 0,
    }).items;
    expect(items.filter((i) => i.jobId !== null).length).toBeGreaterThanOrEqual(fit);
    expect(fit).toBeGreaterThan(0);
    // The rest wait for the next day, unstarted; the studio sent no more than the cap today.
    expect(summary.exported + summary.held.length).toBe(newCount);
    expect(engine.spending.requestsUsedToday()).toBeLessThanOrEqual(cap);
  }, 200_000);
});
