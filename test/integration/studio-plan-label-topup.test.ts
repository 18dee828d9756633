/**
 * A plain shortage under a plan label that is not 'active' yet lets creates through (spec 2.9
 * lists 'refunded'; the reference service charges under it): topped up while the run waits on
 * its 402, the photos must go. 7a982a5 read any covering balance under such a label as the plan
 * refusing, and the run ended 'held short' with the diamonds there, saying adding diamonds would
 * not help (review rev32 D5). Against the reference /v1 service (written from the spec alone),
 * through `run`'s own path.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/studio/run-batch';
import { engineOnWorld } from './helpers/price-reading-studio';
import { chargedTo, referenceWorld } from './helpers/reference-studio';
import { CUTOUT_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'plan-label-topup@ref.test';

describe("a plan label not 'active' that still lets creates through", () => {
  it('a top-up during the run: every photo goes, none held', async () => {
    // 1 diamond for 3 cut-outs (1 each): the second create is refused 402.
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 1,
      service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 20], planStatus: 'refunded' },
      photos: 3,
    });
    const topUp = setInterval(() => {
      if (!w.service.requests().some((r) => r.method === 'POST' && r.status === 402)) return;
      clearInterval(topUp);
      w.service.grant(EMAIL, 10);
    }, 10);
    cleanups.push(() => clearInterval(topUp));
    // The gate's own re-read of the balance is a minute away: the run's read when only held
    // photos are left is what sees the top-up.
    const engine = engineOnWorld(w, cleanups, { concurrency: 1, balanceRecheckMs: 60_000 });
    // The top-up shows as a credit at the run's closing reading, read again a few times as a
    // possible lag: kept short here.
    engine.spending.lagRecheckMs = 100;
    const summary = await runBatch(engine, {
      inDir: w.inDir,
      recipe: CUTOUT_RECIPE,
      outDir: path.join(w.root, 'out'),
      signal: AbortSignal.timeout(40_000),
    });
    // Before: 1 exported, 2 held 'not started: refused 402 (...) while the balance covers it: the
    // account's plan is refunded', the notice 'adding diamonds will not help' (the 402 named a
    // balance of 0: a shortage).
    expect(summary.held).toEqual([]);
    expect(summary.exported).toBe(3);
    expect(chargedTo(w.service, EMAIL)).toBe(3);
    expect((summary.notices ?? []).join('\n')).not.toMatch(/adding diamonds will not help/);
  }, 60_000);
});
