/**
 * Creates refused 402 "Insufficient diamonds: required 4, balance 0" while every account read
 * shows 500 (a service whose 402 and balance disagree: diamonds held elsewhere, another wallet, a
 * plan's gate in the diamonds' words; review rev32 D3). Each read covering the price reopened the
 * diamonds gate, its re-reads from the start, and the board's every read too: a refused create per
 * photo and a read every few seconds (~1,000 requests an hour against a cap of 500 a day). A 402
 * again with no charge between now backs off further each time, and only the gate's own re-reads
 * reopen it. The desktop studio (`run --wait`) with the board's reads, against the reference /v1
 * service (written from the spec alone) behind a proxy answering every create 402.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/studio/run-batch';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { engineOnWorld, ON_MODEL, photoFolders, priceWorlds } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const { world, netSpent } = priceWorlds(cleanups, '402-while-covered@ref.test', 500);

describe('every create refused 402 while the balance covers it', () => {
  it('the refusals back off, the board reading the balance does not reopen it', async () => {
    const w = await world({});
    const [photos] = await photoFolders(w, [2]);
    let creates = 0;
    const proxy = await startFaultProxy({
      target: w.service.url,
      choose: (method, p) => {
        if (method !== 'POST' || p !== '/v1/generations') return null;
        creates++;
        return 'insufficient402';
      },
    });
    cleanups.push(() => proxy.close());
    // The gate's first re-read after 1 s (10 s in the studio), doubling.
    const engine = engineOnWorld(w, cleanups, { via: proxy.url, balanceRecheckMs: 1000 });
    // The board reading the balance, as often as it may (its cache lasts 15 s).
    const board = setInterval(() => void engine.budget().catch(() => undefined), 500);
    cleanups.push(() => clearInterval(board));
    const summary = await runBatch(engine, {
      inDir: photos!,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
      wait: true,
      signal: AbortSignal.timeout(20_000),
    });
    // 2 photos per round. Before: a round after every re-read 1 s apart (and the board's), about
    // 20 rounds. After: rounds at 0, 1, 3, 7 and 15 s.
    expect(summary.exported).toBe(0);
    expect(netSpent(w)).toBe(0);
    expect(creates).toBeLessThanOrEqual(2 * 6);
  }, 60_000);
});
