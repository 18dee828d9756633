/**
 * A service that refuses any repeat of an Idempotency-Key with 409 'already used' and replays
 * nothing (review rev30 D1). After its 500 to a create (the spec's failure after the charge,
 * refunded), the studio's resend under the same key met that 409 and waited on it as if the
 * first attempt were still in progress: ~20 creates per photo, then "uncertain" for good. The 409
 * does not say in progress, and the 500 already told the outcome: sent again under a new key.
 * Against the reference /v1 service (written from the spec alone); money from its ledger.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/studio/run-batch';
import { engineOnWorld, ON_MODEL, photoFolders, priceWorlds } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const { world, netSpent } = priceWorlds(cleanups, 'key-reuse-409@ref.test', 500);

describe('a 409 refusing a key reused after the service answered it 500', () => {
  it('the photo is sent again under a new key: made, paid once, no creates wasted', async () => {
    const w = await world({
      honourIdempotencyKey: true,
      idempotencyKeyReuse: 'refuseAny409',
      fail500AfterChargeFirst: 2,
    });
    const [photos] = await photoFolders(w, [3]);
    const engine = engineOnWorld(w, cleanups);
    const summary = await runBatch(engine, {
      inDir: photos!,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
    });
    const creates = w.service
      .requests()
      .filter((r) => r.method === 'POST' && r.path === '/v1/generations');
    // Before: 0 uncertain photos → 2 (after ~20 creates each), exported 1.
    expect(summary.uncertain).toEqual([]);
    expect(summary.exported).toBe(3);
    expect(netSpent(w)).toBe(12);
    // The 3 first creates (2 answered 500), at most the same key once more for each of the two
    // (the 409), then their new keys.
    expect(creates.length).toBeLessThanOrEqual(3 + 2 * 2);
    expect(creates.filter((r) => r.status === 409).length).toBeLessThanOrEqual(2);
  }, 120_000);
});
