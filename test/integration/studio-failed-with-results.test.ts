/**
 * A job the service ends `failed` yet lists results for (spec 2.3 says none: reference service
 * failedWithResults). Its results are collected and exported, and its charge counts as spend: a
 * service that delivers may also keep the charge (a pack generation whose shots partly failed:
 * "partial failures are not refunded per shot"), and a `--max-diamonds` ceiling must hold against
 * it (review rev16 A1/A2: taking such jobs for refunded let a batch with a ceiling of 8 take 24).
 * If the service does refund, the reading shows a credit: reported above what was taken, never
 * under. Against the reference /v1 service through `run`'s own path; money is checked from its
 * ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import { SHOOT_02_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'failed-with-results@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

describe('a job ended failed that lists results', () => {
  it('a generation whose charge is kept: the ceiling holds, the spend is reported', async () => {
    const w = await world({ failJobs: 1, failedWithResults: true, failedNotRefunded: true });
    const [photos] = await photoFolders(w, [6]);
    const summary = await runOnce(w, photos!, {
      concurrency: 2,
      balanceRecheckMs: 1_000,
      maxDiamonds: 8,
    });
    // Before: 24 taken (every photo admitted on a refund that never came), 0 reported, exit 0.
    expect(netSpent(w)).toBeLessThanOrEqual(8);
    expect(summary.exported).toBeGreaterThan(0);
    expect(summary.exported + summary.held.length).toBe(6);
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(netSpent(w));
  }, 120_000);

  it('a generation the service refunds: results exported, each photo paid once, a rerun pays nothing', async () => {
    const w = await world({ failJobs: 1, failedWithResults: true });
    const [photos] = await photoFolders(w, [3]);
    const summary = await runOnce(w, photos!, { concurrency: 2, balanceRecheckMs: 1_000 });
    expect(summary.exported).toBe(3);
    expect(summary.failed).toEqual([]);
    expect(netSpent(w)).toBe(0);
    w.service.setOptions({ failJobs: 0 });
    const again = await runOnce(w, photos!, { concurrency: 2, balanceRecheckMs: 1_000 });
    expect(again.skipped).toBe(3);
    expect(again.diamondsSpent).toBe(0);
    expect(netSpent(w)).toBe(0);
    expect(w.service.jobs(EMAIL)).toHaveLength(3);
  }, 120_000);

  it('a ready shoot with one shot failed, ended failed listing the shots made: still spend', async () => {
    const w = await world({
      catalogPartialFailedStatus: true,
      failedWithResults: true,
      failShotIds: ['take-2'],
    });
    const [photos] = await photoFolders(w, [2]);
    const summary = await runOnce(w, photos!, {
      recipe: SHOOT_02_RECIPE,
      concurrency: 2,
      balanceRecheckMs: 1_000,
    });
    const spent = netSpent(w);
    expect(spent).toBeGreaterThan(0);
    expect(summary.diamondsSpent).toBe(spent);
    expect(summary.files.length).toBeGreaterThan(0);
  }, 120_000);
});
