/**
 * Cancel pressed while a photo's upload is in flight. An upload costs nothing and the create has
 * not been sent, so the cancel stands: the photo is never submitted (nor charged) when the upload
 * answers afterwards. The move to `submitting` checks the state in the same transaction, so a
 * cancel that lands during the upload is never overwritten. The reference service's
 * uploadDelayMs holds the upload's answer.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { openStudio, type Studio } from '../../src/studio';
import { referenceWorld } from './helpers/reference-studio';
import { CUTOUT_RECIPE } from './helpers/studio-fixtures';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'cancel-uploading@example.com';
const UPLOAD_HELD_MS = 2500;

describe('cancel while an upload is in flight', () => {
  it('the cancelled photos are never submitted or charged once their uploads answer', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      photos: 2,
      service: { seed: 3, timeScale: 0.01, jobSeconds: [5, 5], uploadDelayMs: UPLOAD_HELD_MS },
    });
    const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey, timeoutMs: 10_000 });
    const studio = await openStudio({
      dataDir: path.join(w.root, 'studio'),
      client,
      apiKey: w.apiKey,
      settleMs: 100,
      concurrency: 2,
    });
    cleanups.push(async () => {
      await studio.close();
      await client.close();
    });
    await call(studio, 'folders.add', {
      path: w.inDir,
      outputDir: path.join(w.root, 'out'),
      recipe: CUTOUT_RECIPE,
    });
    const uploading = await until('both photos uploading', async () => {
      const items = (await call(studio, 'queue.list', {})).items;
      return items.length === 2 && items.every((i) => i.state === 'uploading') && items;
    });
    const uploadsAnswered = () =>
      w.service
        .requests()
        .filter((r) => r.method === 'POST' && r.path.startsWith('/v1/uploads') && r.status).length;
    expect(uploadsAnswered()).toBe(0);

    expect(await call(studio, 'queue.cancel', { ids: uploading.map((i) => i.id) })).toEqual({
      changed: 2,
    });
    await until('both uploads answered', async () => uploadsAnswered() === 2);
    // Room for a create that would follow the upload's answer (before: sent at once, charged).
    await new Promise((r) => setTimeout(r, 1500));

    const items = (await call(studio, 'queue.list', {})).items;
    expect(items.map((i) => i.state)).toEqual(['cancelled', 'cancelled']);
    expect(w.service.jobs(EMAIL)).toHaveLength(0);
    expect(w.service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(0);
  }, 120_000);
});
