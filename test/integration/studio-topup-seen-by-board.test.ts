/**
 * Photos held short of diamonds after a top-up the board already showed (review uirev30): the
 * board reads the balance every 15 s (`budget.get`), but only the diamonds gate's own re-read,
 * waiting out its growing delay, let them go: 3-5 minutes of "Diamonds left 22" beside "3 held:
 * short of diamonds". Any balance read covering what the 402 asked now opens the gate. Against the
 * reference /v1 service (written from the spec alone); money from its ledger.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/studio/run-batch';
import { engineOnWorld, ON_MODEL, photoFolders, priceWorlds } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'topup-board@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 0);

describe('a top-up while photos wait short of diamonds', () => {
  it('the board reading the balance lets them go, without the gate re-read (10 min away)', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [2]);
    // The diamonds gate's own re-read is out of this test's reach...
    const engine = engineOnWorld(w, cleanups, { balanceRecheckMs: 10 * 60_000 });
    // ...not the ledger's re-reads (a lagging balance, a refund), which end the run.
    engine.spending.lagRecheckMs = 100;
    engine.spending.refundRecheckMs = 300;
    let boardReads = 0;
    // As the board does while it is open: the balance through `budget.get`, every moment here.
    const board = setInterval(() => {
      const refused = w.service.requests().some((r) => r.method === 'POST' && r.status === 402);
      if (!refused) return;
      if (boardReads++ === 0) w.service.grant(EMAIL, 100);
      void engine.budget().catch(() => undefined);
    }, 200);
    cleanups.push(() => clearInterval(board));
    const summary = await runBatch(engine, {
      inDir: photos!,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
      wait: true,
      signal: AbortSignal.timeout(40_000),
    });
    // Before: 0 exported when the run was stopped at 40 s, both photos 'short of diamonds'.
    expect(boardReads).toBeGreaterThan(0);
    expect(summary.exported).toBe(2);
    expect(netSpent(w)).toBe(8);
  }, 90_000);
});
