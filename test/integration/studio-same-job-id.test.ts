/**
 * A service that answers two creates with one job id (review rev12 D1): the job's result is the
 * first photo's; the others were charged all the same and are left to a person, never exported
 * as another photo's picture nor sent again. `run` as it drives a remote service (HttpClient,
 * StudioEngine, runBatch, the real SQLite store) against the reference /v1 service; money is read
 * from the service's own ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'same-job-id@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);

const outFiles = (w: ReferenceWorld) => {
  const dir = path.join(w.root, 'out');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
};

describe('a service that answers two creates with one job id', () => {
  it("does not export the first photo's result under the others' names; nothing is paid again", async () => {
    const w = await world({ sameJobIdForEveryCreate: true });
    const [photos] = await photoFolders(w, [3]);
    const summary = await runOnce(w, photos!, { concurrency: 1 });
    // Before: 3 exported, 3 byte-identical files (one product's picture under 3 names).
    expect(netSpent(w)).toBe(12);
    expect(summary.exported).toBe(1);
    expect(outFiles(w)).toHaveLength(1);
    expect(summary.failed).toHaveLength(2);
    for (const f of summary.failed) expect(f.reason).toMatch(/another photo's job id/);
    // Paid: the charges are counted, and none is said to be collected by the next run.
    expect(summary.diamondsSpent).toBe(12);
    expect(summary.diamondsOnUncollectedJobs).toBeUndefined();
    // The next run neither pays again nor collects the other photo's job for them.
    const again = await runOnce(w, photos!, { concurrency: 1 });
    expect(netSpent(w)).toBe(12);
    expect(outFiles(w)).toHaveLength(1);
    expect(again.failed).toHaveLength(2);
    for (const f of again.failed) expect(f.reason).toMatch(/another photo's job id/);
  }, 90_000);
});
