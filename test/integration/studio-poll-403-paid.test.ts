/**
 * A 403 to the poll of a paid job (review rev27 D4): a plan paused or expired may gate every call
 * (spec 2.9/3.3 list the plan states and name no status for the gate). It failed the paid photo at
 * once, listed with the service's words alone, no word that it was paid, while a poll's 402 and
 * 401 are asked again. A poll costs nothing: the job stays paid and is asked again; refused for
 * good, it is held for the next run, listed as paid. `run` against the reference /v1 service
 * behind a fault proxy answering 403 to the polls; money from the service's ledger.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { ON_MODEL, photoFolders, priceWorlds } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'poll-403@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);

/** One run with the first `refused` polls of a job answered 403 (a paused plan) by a proxy in front. */
async function runWithPolls403(w: ReferenceWorld, inDir: string, refused: number) {
  let polls403 = 0;
  const proxy = await startFaultProxy({
    target: w.service.url,
    choose: (method, p) =>
      method === 'GET' && p.startsWith('/v1/generations/') && polls403++ < refused
        ? 'planPaused403'
        : null,
  });
  const client = new HttpClient({ baseUrl: proxy.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    backoff: { baseMs: 50, maxMs: 200 },
    balanceRecheckMs: 100,
  });
  try {
    const summary = await runBatch(engine, {
      inDir,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
    });
    return { summary, refusedPolls: Math.min(polls403, refused) };
  } finally {
    await engine.close();
    await client.close();
    await proxy.close();
  }
}

const submittedAtOf = (w: ReferenceWorld) => {
  const db = new Database(path.join(w.root, 'data', 'studio.db'), { readonly: true });
  try {
    return db.prepare('SELECT submitted_at FROM items').pluck().all() as (string | null)[];
  } finally {
    db.close();
  }
};

describe('a 403 to the poll of a paid job', () => {
  it('two polls refused 403: the job is asked again and collected in the same run', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [1]);
    const { summary, refusedPolls } = await runWithPolls403(w, photos!, 2);
    expect(refusedPolls).toBe(2);
    // Before: exported 0, failed 'Your subscription is paused' at the first 403, no word it is paid.
    expect(summary.exported).toBe(1);
    expect(summary.failed).toEqual([]);
    expect(summary.held).toEqual([]);
    expect(summary.diamondsMissing).toBeUndefined();
    expect(netSpent(w)).toBe(4);
    expect(submittedAtOf(w).every((t) => t !== null)).toBe(true);
  }, 60_000);

  it('every poll refused 403: the paid photo is held and listed, its submission kept; the next run collects it', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [1]);
    const { summary } = await runWithPolls403(w, photos!, 1000);
    expect(summary.exported).toBe(0);
    expect(summary.failed).toEqual([]);
    expect(summary.held).toHaveLength(1);
    expect(summary.held[0]!.reason).toMatch(/^paid \(job .+\); .*refused to show the paid job/);
    expect((summary.notices ?? []).join('\n')).not.toMatch(/lost answer's charge/);
    expect(submittedAtOf(w)).toEqual([expect.any(String)]);
    expect(netSpent(w)).toBe(4);
    // The 403s over: collected, nothing paid again.
    const { summary: again } = await runWithPolls403(w, photos!, 0);
    expect(again.exported).toBe(1);
    expect(netSpent(w)).toBe(4);
  }, 60_000);
});
