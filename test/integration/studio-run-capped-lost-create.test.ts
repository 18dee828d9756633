/**
 * A create whose answer was lost (charged at the service) and whose resend the studio's own
 * `--daily-cap` refused unsent (review rev30 D2): it was listed 'not started', left out of the
 * paid jobs to collect, and a later run that could not reach the service said 'nothing was
 * started or spent'. A photo whose create went out is paid, or may be: listed so. `run` against
 * the reference /v1 service behind a fault proxy losing the first create's answer; money from the
 * service's ledger.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch, unreachableSummary } from '../../src/studio/run-batch';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { ON_MODEL, photoFolders, priceWorlds } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** One run with `--daily-cap cap`, the first create's answer lost; the requests that reached the proxy. */
async function runCapped(w: ReferenceWorld, inDir: string, cap: number) {
  let lost = false;
  const log: string[] = [];
  const proxy = await startFaultProxy({
    target: w.service.url,
    choose: (method, p) => {
      log.push(`${method} ${p}`);
      if (lost || method !== 'POST' || p !== '/v1/generations') return null;
      lost = true;
      return 'dropAfter';
    },
  });
  const client = new HttpClient({ baseUrl: proxy.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    concurrency: 1,
    backoff: { baseMs: 50, maxMs: 400 },
    balanceRecheckMs: 100,
    dailyCap: cap,
  });
  try {
    const summary = await runBatch(engine, {
      inDir,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
    });
    return { summary, log };
  } finally {
    await engine.close();
    await client.close();
    await proxy.close();
  }
}

describe('a lost create, then a run that cannot reach the service', () => {
  it('lists the photo as paid or maybe paid (uncertain), never not started, and never says nothing was spent', async () => {
    const { world, netSpent } = priceWorlds(cleanups, 'capped-lost@example.com', 100);
    const w = await world({});
    const [dir] = await photoFolders(w, [2]);
    const first = await runCapped(w, dir!, 500);
    // The service keeps no keys: the lost create stays uncertain, its charge counted from the balance.
    expect(first.summary.uncertain.map((u) => u.name)).toEqual(['p00.jpg']);
    expect(netSpent(w)).toBe(8);
    // The next run cannot reach the service at its recipe check.
    const client = new HttpClient({ baseUrl: 'http://127.0.0.1:9', apiKey: w.apiKey });
    const engine = new StudioEngine({
      dataDir: path.join(w.root, 'data'),
      client,
      apiKey: w.apiKey,
    });
    const notices: string[] = [];
    const summary = await unreachableSummary(engine, {
      inDir: dir!,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
      reason: 'ECONNREFUSED',
      apiRequests: 0,
      onNotice: (line) => notices.push(line),
    }).finally(async () => {
      await engine.close();
      await client.close();
    });
    expect(summary.skipped).toBe(1);
    expect(summary.held).toEqual([]);
    expect(summary.uncertain).toEqual([
      {
        name: 'p00.jpg',
        reason: expect.stringMatching(/^paid or maybe paid: its create was sent/),
      },
    ]);
    expect(notices.join('\n')).not.toMatch(/nothing was started or spent/);
    expect(notices.join('\n')).toMatch(/1 photo\(s\) paid or maybe paid in an earlier run/);
  }, 60_000);
});
