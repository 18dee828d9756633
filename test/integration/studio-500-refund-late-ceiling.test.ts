/**
 * Creates answered 500 under `--max-diamonds` (spec 4.6: the generation failed after the charge;
 * the diamonds are refunded, with no timing given) whose refund the balance does not show yet: the
 * photo is sent again at once, and the 500's charge was counted nowhere: the balance dropped past
 * the ceiling while the refunds were out (6 against 4 in review rev33 D2), a real overspend where
 * they never come, and the closing reading called them spend in the service's own apps. The charge
 * now keeps its room, as a failed job's does, until a reading shows its refund. Against the
 * reference /v1 service (written from the spec alone: fail500AfterChargeFirst, refundLagMs),
 * through `run`'s own path; money from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'refund-500-late@ref.test';
const CEILING = 8; // two photos at 4 diamonds (virtual_model's list)
const { world } = priceWorlds(cleanups, EMAIL, 400);

/** What the batch's charges took from the balance at most at once, refunds not shown (never, here). */
const mostOut = (w: ReferenceWorld) =>
  w.service
    .ledger(EMAIL)
    .filter((e) => e.kind === 'charge')
    .reduce((sum, e) => sum - e.delta, 0);

describe('creates answered 500 whose refund the balance does not show, under --max-diamonds', () => {
  it('their charges keep their room: the balance never drops past the ceiling', async () => {
    // The first two creates are charged and answered 500; their refunds reach the balance only
    // after 10 minutes (never, within the run).
    const w = await world({ fail500AfterChargeFirst: 2, refundLagMs: 600_000 });
    const [photos] = await photoFolders(w, [4]);
    const summary = await runOnce(w, photos!, {
      maxDiamonds: CEILING,
      concurrency: 2,
      balanceRecheckMs: 1_000,
    });
    // Before: both photos sent again at once and charged (16 out of the balance against 8), and
    // the closing reading told 8 "left the balance outside this run".
    expect(mostOut(w)).toBeLessThanOrEqual(CEILING);
    expect((summary.notices ?? []).join('\n')).not.toMatch(/outside this run/);
    expect(summary.held.length).toBeGreaterThan(0);
    for (const h of summary.held) expect(h.reason).toMatch(/has not shown in the balance yet/);
  }, 120_000);
});
