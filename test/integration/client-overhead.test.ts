/**
 * Request overhead (issue 10 item 12) against a /v1 stand-in written from the spec: the tool
 * table is read once however many callers need it at once, and a headless run does not read the
 * account after its charges.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { countingClient } from '../../src/studio/counting-client';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { checkRecipe } from '../../src/studio/recipe-check';
import type { Recipe } from '../../src/shared/studio';
import { startStandIn } from './client-stand-in';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function standIn() {
  const service = await startStandIn();
  cleanups.push(() => service.close());
  return service;
}

describe('request overhead (item 12)', () => {
  it('concurrent callers of GET /v1/models through the studio client share one request, counted once', async () => {
    const service = await standIn();
    let counted = 0;
    const client = countingClient(
      new HttpClient({ baseUrl: service.url, apiKey: service.apiKey }),
      () => counted++,
    ).client;
    const answers = await Promise.all(Array.from({ length: 8 }, () => client.listModels()));
    expect(answers.every((a) => a.some((m) => m.id === 'remove_background'))).toBe(true);
    expect(service.count('GET', '/v1/models')).toBe(1);
    expect(counted).toBe(1);
    // Other calls are still counted one by one.
    await client.getAccount();
    await client.getAccount();
    expect(counted).toBe(3);
  });

  it('a failed read is not remembered: the next caller asks again', async () => {
    const service = await standIn();
    await service.close();
    let counted = 0;
    const client = countingClient(
      new HttpClient({ baseUrl: service.url, apiKey: service.apiKey, timeoutMs: 2000 }),
      () => counted++,
    ).client;
    await expect(client.listModels()).rejects.toMatchObject({ status: 0 });
    await expect(client.listModels()).rejects.toMatchObject({ status: 0 });
    expect(counted).toBe(2);
  });

  /** Runs 8 photos headless as `dropshoot run` does (recipe check, then the batch); returns the service's log. */
  async function headlessRun() {
    const service = await standIn();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-client-overhead-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const inDir = path.join(root, 'in');
    fs.mkdirSync(inDir);
    for (let i = 0; i < 8; i++) {
      await sharp({
        create: { width: 300, height: 400, channels: 3, background: { r: 30 * i, g: 90, b: 160 } },
      })
        .jpeg()
        .toFile(path.join(inDir, `p${i}.jpg`));
    }
    const recipe: Recipe = {
      request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
      export: { preset: 'original', format: 'jpeg', quality: 90, naming: '{name}-{tool}-{n}' },
    };
    const engine = new StudioEngine({
      dataDir: path.join(root, 'studio'),
      client: new HttpClient({ baseUrl: service.url, apiKey: service.apiKey }),
      concurrency: 4,
    });
    try {
      // As `dropshoot run` does: check the recipe, then run the batch.
      expect(await checkRecipe(engine.client, recipe)).toBeNull();
      const summary = await runBatch(engine, { inDir, recipe, outDir: path.join(root, 'out') });
      expect(summary).toMatchObject({ photos: 8, exported: 8 });
    } finally {
      await engine.close();
    }
    return service;
  }

  it('a headless run of 8 photos reads the tool table once (recipe check and pricing share it)', async () => {
    const service = await headlessRun();
    expect(service.count('GET', '/v1/models')).toBe(1);
  });

  it('a headless run does not read the account while it charges (a charge is no reason to ask for the balance)', async () => {
    const service = await headlessRun();
    const charges = service.log
      .filter((r) => r.method === 'POST' && r.path === '/v1/generations')
      .map((r) => r.at);
    expect(charges).toHaveLength(8);
    const readsWhileCharging = service.log.filter(
      (r) =>
        r.path === '/v1/account' && r.at >= Math.min(...charges) && r.at <= Math.max(...charges),
    );
    expect(readsWhileCharging).toEqual([]);
  });
});
