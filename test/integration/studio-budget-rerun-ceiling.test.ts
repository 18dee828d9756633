/**
 * A rerun's `--max-diamonds` counts what that run spends. A run stopped with paid jobs still
 * processing (`--give-up-after`, or a restart) leaves them to the next run, which takes them over
 * and collects them at no new charge; before, their charges counted against the rerun's own
 * ceiling and held photos that fitted it (review rev13 E4: virtual_model at 4, --max-diamonds 12,
 * 6 photos: run 2 collected the 2 paid jobs, spent 0 and held the other 4). Against the reference
 * /v1 service (written from the spec alone) on loopback, through `run`'s own path (HttpClient,
 * StudioEngine, runBatch); money is checked from the service's ledger.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { batchSpent } from '../../src/studio/db/queries';
import { ON_MODEL, netSpent } from './helpers/price-reading-studio';
import { referenceWorld, type ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'rerun-ceiling@ref.test';
const CEILING = 12;

/** Six photos; jobs that stay processing until the test lets them finish. */
const stuckWorld = () =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 1000,
    photos: 6,
    service: { seed: 7, timeScale: 0.01, jobSeconds: [100, 150], jobsStayProcessing: true },
  });

/** One `run` of ON_MODEL (virtual_model, 4 at the list) under the ceiling; `stopAfterMs`: a restart. */
async function run(w: ReferenceWorld, opts: { giveUpAfterMs?: number; stopAfterMs?: number }) {
  const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    concurrency: 4,
    backoff: { baseMs: 50, maxMs: 400 },
    balanceRecheckMs: 100,
  });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('SIGTERM'), opts.stopAfterMs ?? 40_000);
  const before = netSpent(w, EMAIL);
  try {
    const summary = await runBatch(engine, {
      inDir: w.inDir,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
      maxDiamonds: CEILING,
      signal: stop.signal,
      ...(opts.giveUpAfterMs !== undefined ? { giveUpAfterMs: opts.giveUpAfterMs } : {}),
    });
    // What the studio's views show against the ceiling (db/views.ts) agrees with the run.
    const shownSpent = batchSpent(engine.db, summary.batchId);
    return { summary, spent: netSpent(w, EMAIL) - before, shownSpent };
  } finally {
    clearTimeout(timer);
    await engine.close();
    await client.close();
  }
}

/**
 * The rerun after a first run that left 2 paid jobs (8 spent): it collects them for nothing and
 * spends on the photos that fit its own ceiling, as it reports and shows; nothing is paid twice.
 */
function expectRerunSpendsItsOwn(
  w: ReferenceWorld,
  first: Awaited<ReturnType<typeof run>>,
  second: Awaited<ReturnType<typeof run>>,
): void {
  // Before: 2 exported (the paid jobs), 0 spent, 4 held at the ceiling of 12.
  expect(second.spent).toBeGreaterThan(0);
  expect(second.spent).toBeLessThanOrEqual(CEILING);
  expect(second.summary.diamondsSpent).toBe(second.spent);
  expect(second.shownSpent).toBe(second.spent);
  expect(second.summary.exported).toBe(2 + second.spent / 4);
  // Nothing paid twice: one charge per photo exported or held paid.
  expect(w.service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(
    (first.spent + second.spent) / 4,
  );
}

describe("a rerun's ceiling counts only what the rerun spends", () => {
  it('after a give-up: the paid jobs are collected for nothing and the photos that fit go', async () => {
    const w = await stuckWorld();
    const first = await run(w, { giveUpAfterMs: 2_000 });
    expect(first.spent).toBe(8);
    expect(first.summary.stillProcessing).toHaveLength(2);

    w.service.setOptions({ jobsStayProcessing: false });
    expectRerunSpendsItsOwn(w, first, await run(w, { giveUpAfterMs: 20_000 }));
  }, 90_000);

  it('after a restart (the first run stopped with jobs in flight): the same', async () => {
    const w = await stuckWorld();
    const first = await run(w, { stopAfterMs: 4_000 });
    expect(first.summary.interrupted).toBeDefined();
    expect(first.spent).toBe(8);

    w.service.setOptions({ jobsStayProcessing: false });
    expectRerunSpendsItsOwn(w, first, await run(w, { giveUpAfterMs: 20_000 }));
  }, 90_000);
});
