/**
 * Items 3, 11 and the catalog cache of item 7 against the reference /v1 service (written from the
 * spec alone, test/reference-service): results on another port as `application/octet-stream`,
 * the ready-set cursor read from `after` (a name the spec does not give), or from a name we do
 * not send at all.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient, readAllReadySets } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { HotFolders } from '../../src/studio/folders';
import { createCommands, runCommand } from '../../src/studio/commands';
import { runBatch } from '../../src/studio/run-batch';
import * as store from '../../src/studio/db/store';
import type { CatalogView, Recipe } from '../../src/shared/studio';
import { startReferenceService, type ReferenceServiceOptions } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-client-reference-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function reference(options: ReferenceServiceOptions = {}) {
  const service = await startReferenceService({ seed: 10, timeScale: 0.01, ...options });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: 'studio@example.com', diamonds: 100 });
  return {
    service,
    apiKey,
    client: new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 10_000 }),
  };
}

describe('against the reference service', () => {
  it('reads every ready shoot through its `after` cursor, one request a page', async () => {
    const { service, apiKey, client } = await reference({ cursorParam: 'after' });
    const read = await readAllReadySets(client, { pageSize: 5 });
    // 13 sets, one inactive: 12 in pages of 5.
    expect(read).toMatchObject({ stop: 'end', complete: true, pages: 3 });
    expect(new Set(read.templateSets.map((s) => s.id)).size).toBe(12);
    expect(service.requestsToday(apiKey)).toBe(3);
  });

  it('stops at the second request when the cursor goes under a name it does not send', async () => {
    const { service, apiKey, client } = await reference({ cursorParam: 'page_cursor' });
    const read = await readAllReadySets(client, { pageSize: 5 });
    expect(read).toMatchObject({ stop: 'page_repeated', complete: false, pages: 2 });
    expect(read.templateSets).toHaveLength(5);
    expect(service.requestsToday(apiKey)).toBe(2);
  });

  it('opening the recipe builder costs its requests once, then none, across a restart', async () => {
    const { service, apiKey } = await reference({ cursorParam: 'after', extraFields: true });
    const dataDir = tempDir();
    const open = async () => {
      const engine = new StudioEngine({
        dataDir,
        client: new HttpClient({ baseUrl: service.url, apiKey }),
      });
      const commands = createCommands(engine, new HotFolders(engine));
      const [catalog, looks] = await Promise.all([
        runCommand(commands, 'catalog.get', {}),
        runCommand(commands, 'looks.list', {}),
      ]);
      await engine.close();
      if (!catalog.ok || !looks.ok) throw new Error('a catalog command failed');
      return catalog.result as CatalogView;
    };
    const cold = await open();
    const coldRequests = service.requestsToday(apiKey);
    // models, fashion-models, venues, 5 pose sets, ready sets (12 in one page of up to 50), template-sets
    expect(coldRequests).toBe(10);
    expect(cold.readyShoots).toHaveLength(12);
    const warm = await open();
    expect(service.requestsToday(apiKey)).toBe(coldRequests);
    expect(warm.tools.map((t) => t.id)).toEqual(cold.tools.map((t) => t.id));
  });

  it('a headless run stores results served as application/octet-stream from another port as images, with thumbnails and rendered exports', async () => {
    const { client } = await reference({ resultsOnOtherHost: true, jobSeconds: [5, 10] });
    const root = tempDir();
    const inDir = path.join(root, 'in');
    fs.mkdirSync(inDir);
    for (const [i, hue] of [20, 140, 260].entries()) {
      await sharp({
        create: { width: 600, height: 800, channels: 3, background: { r: 244, g: 244, b: 240 } },
      })
        .composite([
          {
            input: Buffer.from(
              `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="500"><rect width="300" height="500" rx="40" fill="hsl(${hue},70%,45%)"/></svg>`,
            ),
            top: 150,
            left: 150,
          },
        ])
        .jpeg({ quality: 88 })
        .toFile(path.join(inDir, `look-${i}.jpg`));
    }
    const recipe: Recipe = {
      request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
      export: { preset: 'amazon', format: 'jpeg', quality: 90, naming: '{name}-{tool}-{n}' },
    };
    const engine = new StudioEngine({ dataDir: path.join(root, 'studio'), client, concurrency: 2 });
    try {
      const summary = await runBatch(engine, { inDir, recipe, outDir: path.join(root, 'out') });
      expect(summary).toMatchObject({ photos: 3, exported: 3, failed: [] });
      const results = store
        .listItems(engine.db, { limit: 10, offset: 0 })
        .items.flatMap((i) => store.resultsOf(engine.db, i.id));
      expect(results.length).toBeGreaterThanOrEqual(3);
      for (const result of results) {
        expect(result.mime).toMatch(/^image\/(png|jpeg|webp)$/);
        expect(result.file).not.toMatch(/\.bin$/);
        expect(result.thumb).not.toBeNull();
        const stored = await sharp(engine.library.absolute(result.file)).metadata();
        expect(`image/${stored.format}`).toBe(result.mime);
        expect(result.exportedPath).toMatch(/\.jpg$/);
        const report = store.resultView(result).compliance!;
        expect(report.checks.length).toBeGreaterThan(0);
        expect(report.checks.find((c) => c.id === 'format')).toMatchObject({
          ok: true,
          value: 'jpeg',
        });
      }
    } finally {
      await engine.close();
    }
  });
});
