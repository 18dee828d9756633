/**
 * While the service refuses connections, the day's request count stands still: a request that
 * never left (connection refused) cannot have been counted by the service, so the studio gives it
 * back; one that may have arrived (a reset after sending) stays counted (review uirev A4: 114 ->
 * 152 used in 6 minutes of outage, a 500 cap gone in hours). The studio engine and `run` on a real
 * data folder, against the reference /v1 service behind a proxy that is reset, then shut.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { referenceWorld, runOnWorld, stopAfter } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('requests while the service is down', () => {
  it('refused connections use none of the day; resets after sending still count', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'refused@example.com',
      diamonds: 500,
      photos: 2,
      service: { seed: 5, timeScale: 0.01, jobSeconds: [1, 1], failShots: 0 },
    });
    let mode: 'pass' | 'reset' = 'pass';
    const proxy = await startFaultProxy({
      target: w.service.url,
      choose: () => (mode === 'reset' ? 'resetBefore' : null),
    });
    let shut = false;
    cleanups.push(() => (shut ? undefined : proxy.close()));
    const withEngine = async <T>(fn: (engine: StudioEngine) => Promise<T>) => {
      const client = new HttpClient({ baseUrl: proxy.url, apiKey: w.apiKey, timeoutMs: 5000 });
      const engine = new StudioEngine({
        dataDir: path.join(w.root, 'data'),
        client,
        apiKey: w.apiKey,
      });
      try {
        return await fn(engine);
      } finally {
        await engine.close();
        await client.close();
      }
    };
    const used = () => withEngine(async (engine) => engine.spending.requestsUsedToday());

    // Up: a run, every request counted as the service counted it.
    const up = await runOnWorld(w, { baseUrl: proxy.url });
    expect(up.exported).toBe(2);
    expect(await used()).toBe(w.service.requestsToday(w.apiKey));

    // Reset once the request is sent: the service may have read it, so it counts.
    mode = 'reset';
    const beforeResets = await used();
    await withEngine(async (engine) => {
      for (let i = 0; i < 3; i++)
        await expect(engine.client.getAccount()).rejects.toMatchObject({ notSent: false });
      expect(engine.spending.requestsUsedToday()).toBe(beforeResets + 3);
    });

    // Down: nothing listens at the address any more.
    await proxy.close();
    shut = true;
    const beforeOutage = await used();
    const servedBeforeOutage = w.service.requestsToday(w.apiKey);
    await withEngine(async (engine) => {
      for (let i = 0; i < 5; i++) {
        await expect(engine.client.getAccount()).rejects.toMatchObject({
          status: 0,
          notSent: true,
        });
        await expect(engine.client.getGeneration('job-1')).rejects.toMatchObject({ notSent: true });
      }
      // Before: 10 more used.
      expect(engine.spending.requestsUsedToday()).toBe(beforeOutage);
    });
    // A run meanwhile: new photos, every upload refused, retried until it is stopped.
    const more = path.join(w.root, 'more');
    fs.mkdirSync(more);
    // Other photos (a byte more each), so the run has to send them.
    for (const f of fs.readdirSync(w.inDir))
      fs.writeFileSync(
        path.join(more, `again-${f}`),
        Buffer.concat([fs.readFileSync(path.join(w.inDir, f)), Buffer.from([0])]),
      );
    const down = await runOnWorld(w, {
      baseUrl: proxy.url,
      folders: { inDir: more, outDir: path.join(w.root, 'out-more') },
      signal: stopAfter(cleanups, 3000),
    });
    expect(down.exported).toBe(0);
    expect(JSON.stringify(down)).toMatch(/ECONNREFUSED|could not be reached/);
    expect(await used()).toBe(beforeOutage);
    expect(w.service.requestsToday(w.apiKey)).toBe(servedBeforeOutage);
  }, 120_000);
});
