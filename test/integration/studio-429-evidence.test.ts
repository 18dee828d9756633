/**
 * A 429 is the daily cap or a rate limit whatever its words: services word both freely. Against
 * the reference /v1 service (written from the spec alone) on loopback, through `run`'s own path
 * (HttpClient, StudioEngine, runBatch), each run stopped after 45 s if it has not ended.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { startReferenceService, type ReferenceServiceOptions } from '../reference-service';
import { rewritingFront } from './helpers/rewriting-front';
import { shapePhotos } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'too-many@ref.test';
const CUTOUT: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

/**
 * A pass-through in front of the service that drops Retry-After: the spec names no such header,
 * and a service may send none with its rate limits.
 */
const withoutRetryAfter = (target: string) =>
  rewritingFront(cleanups, target, (_, answer) => {
    const headers = { ...answer.headers };
    delete headers['retry-after'];
    return { ...answer, headers };
  });

async function runAgainst(
  options: ReferenceServiceOptions,
  account: { dailyCap?: number },
  photos: number,
  dropRetryAfter = false,
) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-429-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 6, timeScale: 0.01, ...options });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 100, ...account });
  const inDir = path.join(root, 'in');
  await shapePhotos(inDir, photos);
  const url = dropRetryAfter ? await withoutRetryAfter(service.url) : service.url;
  const client = new HttpClient({ baseUrl: url, apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({ dataDir: path.join(root, 'data'), client, apiKey });
  cleanups.push(async () => {
    await engine.close();
    await client.close();
  });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('SIGTERM'), 45_000);
  cleanups.push(() => clearTimeout(timer));
  const summary = await runBatch(engine, {
    inDir,
    recipe: CUTOUT,
    outDir: path.join(root, 'out'),
    signal: stop.signal,
  });
  return { summary, service, apiKey, engine };
}

describe('429 told by evidence, not words', () => {
  it("a daily cap worded 'Request limit of 12 reached for this API key' closes the day at once: the run ends saying so", async () => {
    const { summary, service, apiKey, engine } = await runAgainst(
      { dailyCapMessage: 'Request limit of 12 reached for this API key', jobSeconds: [20, 30] },
      { dailyCap: 12 },
      4,
    );
    expect(summary.interrupted).toBeUndefined();
    expect(summary.notices).toContainEqual(
      expect.stringContaining(
        'daily request cap reached (Request limit of 12 reached for this API key)',
      ),
    );
    // Requests sent into the closed day: those already on their way, not one every 2 s.
    expect(service.requestsToday(apiKey) - 12).toBeLessThanOrEqual(3);
    // Its number is remembered as the service's cap for the days after.
    expect(engine.spending.serviceCap()).toBe(12);
  }, 90_000);

  it("a per-second limit worded 'quota', with no Retry-After, is waited out: every photo is delivered", async () => {
    const { summary } = await runAgainst(
      {
        rateLimit: {
          probability: 0.3,
          retryAfterSeconds: 1,
          message: 'Rate limit exceeded: quota of 10 requests per second for this API key',
        },
      },
      {},
      4,
      true,
    );
    expect(summary.interrupted).toBeUndefined();
    expect(summary.exported).toBe(4);
    expect(summary.held).toEqual([]);
    expect(summary.notices?.some((n) => n.includes('daily request cap'))).toBe(false);
  }, 90_000);
});
