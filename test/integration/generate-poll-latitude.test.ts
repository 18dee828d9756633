/**
 * `dropshoot generate` (one photo, polled until done) against the reference /v1 service when a
 * `completed` job lists its results a little later: the results are collected, never an empty
 * success; a job listing none is reported paid without results, not as done.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { generateOne } from '../../src/studio/one-shot';
import { startReferenceService, type ReferenceServiceOptions } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function generate(options: ReferenceServiceOptions) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-generate-latitude-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  // Jobs of 0.2 s: done at the first poll (0.8 s).
  const service = await startReferenceService({
    seed: 3,
    timeScale: 0.01,
    jobSeconds: [20, 20],
    ...options,
  });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: 'generate@example.com', diamonds: 20 });
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const photo = path.join(root, 'p.jpg');
  await sharp({ create: { width: 200, height: 260, channels: 3, background: '#607080' } })
    .jpeg()
    .toFile(photo);
  return generateOne(client, {
    photo,
    request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
    outDir: path.join(root, 'out'),
  });
}

describe('generate under completed-without-results', () => {
  it('asks again while a completed job lists no results yet, and saves them', async () => {
    const result = await generate({ completedEmptyMs: 1500 });
    expect(result.files).toHaveLength(1);
    expect(fs.statSync(result.files[0]!).size).toBeGreaterThan(0);
  });

  it('reports a completed job that never lists results as paid without results', async () => {
    await expect(generate({ completedEmptyMs: 600_000 })).rejects.toThrow(/paid without results/);
  }, 30_000);
});
