/**
 * A create whose answer was lost (charged, answer never read) on a service that keeps no
 * Idempotency-Keys, marked failed by `run --uncertain fail` in the same run: the balance reading
 * whose window holds it cannot tell whether it was charged, so no other photo is given its charge
 * and no price is learnt from that reading. `run` as it drives a remote service (HttpClient,
 * StudioEngine, runBatch, the real SQLite store) against the reference /v1 service behind a fault
 * proxy that loses that one answer; money is read from the service's own ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  photoFolders,
  plannedPrice,
  priceWorlds,
  runOnce,
  withEngine,
} from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'lost-create@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);

/** `run --uncertain fail` of ON_MODEL (4 at the list) over `inDir`, the first create's answer lost. */
async function runLosingFirstCreate(w: ReferenceWorld, inDir: string) {
  return runOnce(w, inDir, { loseFirstCreate: true, concurrency: 1, uncertain: 'fail' });
}

describe('a lost create marked failed (--uncertain fail) in the reading of the same run', () => {
  it('is a possible charge: the delivered photo keeps its list price, none is learnt, the next ceiling is not blocked', async () => {
    const w = await world({});
    const [first, second] = await photoFolders(w, [2, 2]);
    const one = await runLosingFirstCreate(w, first!);
    // Both creates charged 4 (the lost one too: its answer only was lost).
    expect(netSpent(w)).toBe(8);
    expect(one.exported).toBe(1);
    expect(one.failed).toHaveLength(1);
    expect(one.failed[0]!.reason).toMatch(/marked failed by the operator/);
    const delivered = await withEngine(w, (e) =>
      e.db
        .prepare("SELECT diamonds FROM items WHERE state = 'exported'")
        .all()
        .map((r) => (r as { diamonds: number }).diamonds),
    );
    // Before: the reading (8) was split onto the delivered photo alone: counted 8, price 8 learnt.
    expect(delivered).toEqual([4]);
    expect(await plannedPrice(w)).toEqual({ diamonds: 4, sure: false });
    // A ceiling of two photos at the list and its margin (4 + 1 each).
    const two = await runOnce(w, second!, { maxDiamonds: 10 });
    // Before: "the price is unconfirmed (8 … list 4)": both held, nothing started.
    expect(two.held).toEqual([]);
    expect(two.exported).toBe(2);
    expect(netSpent(w)).toBe(16);
  }, 90_000);
});
