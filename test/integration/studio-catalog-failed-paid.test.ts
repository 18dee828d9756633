/**
 * A ready shoot that the service ends `failed` with one shot failed lists no results (spec 2.3:
 * "Empty array when failed") yet its counters show the shots it made, and those stay charged
 * (spec 3.2: partial failures are not refunded per shot). The photo is held as paid: the same job
 * is asked again, never submitted again, and the reason says why nothing was exported. The
 * reference service's catalogPartialFailedStatus ends such a job so, failShotIds fails one shot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { referenceWorld, runOnWorld } from './helpers/reference-studio';
import { SHOOT_02_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'catalog-failed-paid@example.com';

describe('a ready shoot ended failed with shots completed', () => {
  it('is held as paid (shots named, not refunded) and never submitted again on a rerun', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      photos: 2,
      service: {
        seed: 5,
        timeScale: 0.01,
        jobSeconds: [20, 20],
        catalogPartialFailedStatus: true,
        failShotIds: ['take-2'],
      },
    });
    const charged = () =>
      -w.service
        .ledger(EMAIL)
        .filter((e) => e.kind === 'charge' || e.kind === 'refund')
        .reduce((sum, e) => sum + e.delta, 0);

    const first = await runOnWorld(w, { recipe: SHOOT_02_RECIPE });
    expect(first.exported).toBe(0);
    expect(charged()).toBe(18);
    expect(first.diamondsSpent).toBe(18);
    expect(first.failed).toHaveLength(2);
    for (const f of first.failed)
      expect(f.reason).toMatch(
        /paid without results: .*failed.*2 shot\(s\) completed.*2 shot\(s\) paid for and never listed, not refunded/,
      );

    // Before: read as refunded, each rerun paid both photos again (18 more each time).
    const second = await runOnWorld(w, { recipe: SHOOT_02_RECIPE });
    expect(w.service.jobs(EMAIL)).toHaveLength(2);
    expect(charged()).toBe(18);
    expect(second.diamondsSpent).toBe(0);
    expect(second.failed).toHaveLength(2);
    expect(second.failed[0]!.reason).toMatch(/2 shot\(s\) paid for and never listed/);
  }, 120_000);
});
