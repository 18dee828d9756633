/**
 * A plan's gate on the poll of a paid job: a 402 (review rev25 D7: a plan in billing_issue; the
 * spec names 402 for creates only) was taken as a create's 402: the diamonds gate closed (the run
 * ended at once), the paid job's submittedAt was cleared, the paid photo in no list of the summary.
 * A 403 (review rev27 D4: a plan paused or expired; spec 2.9/3.3 name no status for the gate)
 * failed the paid photo at once, listed with the service's words alone, no word that it was paid.
 * A poll costs nothing: the job stays paid and is asked again; refused for good, it is held for
 * the next run, listed as paid. `run` against the reference /v1 service behind a fault proxy
 * answering the polls; money from the service's ledger.
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

/** The gates: the status, and the fault proxy's answer carrying it. */
const GATES = [
  { status: 402, fault: 'insufficient402' },
  { status: 403, fault: 'planPaused403' },
] as const;

/**
 * One run with polls answered by `fault` by a proxy in front: the first `refused` polls of any
 * job, or with `firstJobOnly` every poll of the first job polled and no other. With
 * `uploadsBeforeGate`, uploads after that many are turned away (503) until two polls are refused
 * (two jobs refused close the account's gate), so that comes while photos are still to be sent. `wait`: `run --wait` (as the desktop studio,
 * the engine goes on) until `signal`; `clockShiftMs` moves the engine's clock on once asked.
 */
async function runWithRefusedPolls(
  w: ReferenceWorld,
  inDir: string,
  fault: (typeof GATES)[number]['fault'],
  refused: number,
  more: {
    uploadsBeforeGate?: number;
    firstJobOnly?: boolean;
    wait?: boolean;
    signal?: AbortSignal;
    clock?: { shiftMs: number };
    /** Kept up to date while the run goes. */
    live?: { refusedPolls: number };
  } = {},
) {
  let polls = 0;
  let refusedPolls = 0;
  let uploads = 0;
  let firstJob: string | null = null;
  /** Creates that reached the service after two polls were refused. */
  let createsAfterRefusal = 0;
  const proxy = await startFaultProxy({
    target: w.service.url,
    choose: (method, p) => {
      if (method === 'POST' && p === '/v1/uploads') {
        if (refusedPolls < 2 && uploads >= (more.uploadsBeforeGate ?? Infinity))
          return 'unavailable503';
        uploads++;
      }
      if (method === 'POST' && p !== '/v1/uploads' && refusedPolls >= 2) createsAfterRefusal++;
      if (method !== 'GET' || !p.startsWith('/v1/generations/')) return null;
      polls++;
      firstJob ??= p;
      const refuse = more.firstJobOnly ? p === firstJob : refusedPolls < refused;
      if (!refuse) return null;
      refusedPolls++;
      if (more.live) more.live.refusedPolls = refusedPolls;
      return fault;
    },
  });
  const client = new HttpClient({ baseUrl: proxy.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const clock = more.clock;
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    backoff: { baseMs: 50, maxMs: 200 },
    balanceRecheckMs: 100,
    ...(clock ? { now: () => new Date(Date.now() + clock.shiftMs) } : {}),
  });
  try {
    const summary = await runBatch(engine, {
      inDir,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
      ...(more.wait ? { wait: true } : {}),
      ...(more.signal ? { signal: more.signal } : {}),
    });
    return { summary, refusedPolls, polls, createsAfterRefusal, engine };
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

describe.each(GATES)('a $status to the poll of a paid job', ({ status, fault }) => {
  const { world, netSpent } = priceWorlds(cleanups, `poll-${status}@ref.test`, 500);

  it('two polls refused: the job is asked again and collected in the same run', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [1]);
    const { summary, refusedPolls } = await runWithRefusedPolls(w, photos!, fault, 2);
    expect(refusedPolls).toBe(2);
    // Before: 402 exported 0, every list empty, the diamonds gate closed (exit 1); 403 failed.
    expect(summary.exported).toBe(1);
    expect(summary.failed).toEqual([]);
    expect(summary.held).toEqual([]);
    expect(summary.diamondsMissing).toBeUndefined();
    expect(netSpent(w)).toBe(4);
    expect(submittedAtOf(w).every((t) => t !== null)).toBe(true);
  }, 60_000);

  it('every poll refused: the paid photo is held and listed, its submission kept; the next run collects it', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [1]);
    const { summary } = await runWithRefusedPolls(w, photos!, fault, 1000);
    expect(summary.exported).toBe(0);
    expect(summary.failed).toEqual([]);
    expect(summary.held).toHaveLength(1);
    expect(summary.held[0]!.reason).toMatch(
      new RegExp(`^paid \\(job .+\\); .*refused to show the paid jobs? .*\\(${status}: `),
    );
    expect((summary.notices ?? []).join('\n')).not.toMatch(/lost answer's charge/);
    expect(submittedAtOf(w)).toEqual([expect.any(String)]);
    expect(netSpent(w)).toBe(4);
    // The gate lifted: collected, nothing paid again.
    const { summary: again } = await runWithRefusedPolls(w, photos!, fault, 0);
    expect(again.exported).toBe(1);
    expect(netSpent(w)).toBe(4);
  }, 60_000);
});

describe('the service refusing to show every paid job, with many photos', () => {
  const { world, netSpent } = priceWorlds(cleanups, 'poll-gate-many@ref.test', 500);

  it('one poll at a time asks; no photo is sent while it refuses; the next run collects and starts the rest', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [10]);
    // 3 photos paid, then every poll refused while the other 7 are still to be sent.
    const { summary, polls, createsAfterRefusal } = await runWithRefusedPolls(
      w,
      photos!,
      'planPaused403',
      100_000,
      { uploadsBeforeGate: 3 },
    );
    const paid = summary.held.filter((h) => h.reason.startsWith('paid ('));
    const notStarted = summary.held.filter((h) => h.reason.startsWith('not started: '));
    expect(paid).toHaveLength(3);
    for (const h of paid)
      expect(h.reason).toMatch(/refused to show the paid jobs 12 times \(403: /);
    expect(notStarted).toHaveLength(7);
    for (const h of notStarted) expect(h.reason).toMatch(/refuses to show paid jobs \(403: /);
    // Before: the 7 were paid too while nothing paid could be collected.
    expect(createsAfterRefusal).toBe(0);
    expect(netSpent(w)).toBe(12);
    expect(summary.exported).toBe(0);
    expect(summary.failed).toEqual([]);
    // The 3 paid jobs' first polls (and the first's own second, before another was refused), then
    // the engine's probes up to the 12 refusals allowed. Before: each paid photo asked 12 times
    // on its own (36, and 120 with the 7 sent).
    expect(polls).toBeLessThanOrEqual(3 + 1 + 11);
    expect((summary.notices ?? []).join('\n')).toMatch(
      /7 photo\(s\) not started: the service refused to show paid jobs/,
    );
    // Shown again: the paid ones collected at no new charge, the others made.
    const { summary: again } = await runWithRefusedPolls(w, photos!, 'planPaused403', 0);
    expect(again.exported).toBe(10);
    expect(again.held).toEqual([]);
    expect(netSpent(w)).toBe(40);
  }, 120_000);

  it('the desktop studio going on: an hour later nothing is paid for while the service still refuses', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [10]);
    const clock = { shiftMs: 0 };
    const live = { refusedPolls: 0 };
    const stop = new AbortController();
    const run = runWithRefusedPolls(w, photos!, 'planPaused403', 100_000, {
      uploadsBeforeGate: 3,
      wait: true,
      signal: stop.signal,
      clock,
      live,
    });
    // The 3 paid held after the refusals allowed (a failed paid photo waits for a Retry), then
    // 61 minutes on.
    for (let i = 0; i < 600 && live.refusedPolls < 13; i++)
      await new Promise((r) => setTimeout(r, 100));
    clock.shiftMs = 61 * 60_000;
    await new Promise((r) => setTimeout(r, 15_000));
    stop.abort('enough');
    const { createsAfterRefusal } = await run;
    // Review rev31 D3: the gate opened by itself after an hour's hold and the 7 were paid for.
    expect(createsAfterRefusal).toBe(0);
    expect(netSpent(w)).toBe(12);
  }, 120_000);
});

describe('every poll refused while one paid job is alone in flight', () => {
  const { world, netSpent } = priceWorlds(cleanups, 'poll-gate-alone@ref.test', 500);

  it('one more photo tells it is the account, the rest wait; the next run, still refused, pays for none', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [10]);
    const { summary } = await runWithRefusedPolls(w, photos!, 'planPaused403', 100_000, {
      uploadsBeforeGate: 1,
    });
    // Review rev32 D1: the one job refused backed off alone while the 9 others were paid for,
    // none of their jobs shown (40 charged). Now one trial photo, then the gate.
    expect(summary.held.filter((h) => h.reason.startsWith('paid ('))).toHaveLength(2);
    expect(summary.held.filter((h) => h.reason.startsWith('not started: '))).toHaveLength(8);
    expect(netSpent(w)).toBe(8);
    // Review rev32 D2: the next run paid for photos in the same tick as the held jobs' refused
    // polls. Now it starts closed and probes first.
    const next = await runWithRefusedPolls(w, photos!, 'planPaused403', 100_000);
    expect(next.createsAfterRefusal).toBe(0);
    expect(netSpent(w)).toBe(8);
    expect(next.summary.exported).toBe(0);
    // Shown again: everything made, the 2 paid collected at no new charge.
    const last = await runWithRefusedPolls(w, photos!, 'planPaused403', 0);
    expect(last.summary.exported).toBe(10);
    expect(netSpent(w)).toBe(40);
  }, 180_000);
});

describe("one job's polls refused, the others shown", () => {
  const { world, netSpent } = priceWorlds(cleanups, 'poll-one-job@ref.test', 500);

  it('that photo alone is held as paid; the others are made and exported', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [10]);
    // The refused job is alone in flight when first refused: the others still to be sent.
    const { summary } = await runWithRefusedPolls(w, photos!, 'planPaused403', 0, {
      uploadsBeforeGate: 1,
      firstJobOnly: true,
    });
    // Review rev31 D1: one job's 403 closed the account's gate: 0 exported, 9 not started.
    expect(summary.exported).toBe(9);
    expect(summary.held).toEqual([
      {
        name: expect.any(String),
        reason: expect.stringMatching(/^paid \(job .+\); .*refused to show the paid job 12 times/),
      },
    ]);
    expect(netSpent(w)).toBe(40);
  }, 120_000);
});
