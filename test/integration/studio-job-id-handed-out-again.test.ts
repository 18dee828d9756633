/**
 * A job id handed out again (the service's ids restarted after a redeploy on a new store, or the
 * data folder pointed at another service) is the new photo's job: collected, not taken for
 * "another photo's job" because a photo exported long ago held the same id (review rev23 N3: 12
 * charged, 0 exported, and no rerun collected them). A service answering a new create with the id
 * of a job we finished (its results) is still caught (review rev12 D1). `run` as it drives a
 * remote service (HttpClient, StudioEngine, runBatch, the real SQLite store) against the
 * reference /v1 service; money is read from the service's own ledger.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'id-again@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);

const outFiles = (w: ReferenceWorld) => {
  const dir = path.join(w.root, 'out');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
};

describe('a job id the service hands out again', () => {
  it('after the service restarted its ids: the new photos are collected, each paid once', async () => {
    // Ids 1001, 1002... from each new service process.
    const first = await world({ numericJobIds: true });
    const [before, after] = await photoFolders(first, [2, 2]);
    const run1 = await runOnce(first, before!, { concurrency: 1 });
    expect(run1.exported).toBe(2);
    expect(outFiles(first)).toHaveLength(2);

    // Redeployed on a new store (another process, its ids from 1001 again), same data folder.
    const redeployed = await world({ numericJobIds: true, seed: 12 });
    const onSameData: ReferenceWorld = { ...redeployed, root: first.root };
    const run2 = await runOnce(onSameData, after!, { concurrency: 1 });
    // Before: 8 charged, 0 exported, 2 failed "another photo's job id (1001, held by ...)".
    expect(netSpent(redeployed)).toBe(8);
    expect(run2.failed).toEqual([]);
    expect(run2.exported).toBe(2);
    expect(outFiles(first)).toHaveLength(4);
    // Nothing left to collect, nothing paid again.
    const run3 = await runOnce(onSameData, after!, { concurrency: 1 });
    expect(run3.failed).toEqual([]);
    expect(netSpent(redeployed)).toBe(8);
    expect(outFiles(first)).toHaveLength(4);
  }, 90_000);

  it('a photo held as "another photo\'s job" while the holder was live is collected once the holder has finished', async () => {
    const first = await world({ numericJobIds: true });
    const [before, after] = await photoFolders(first, [1, 1]);
    expect((await runOnce(first, before!, { concurrency: 1 })).exported).toBe(1);
    // The first photo's job read as still running when the reused id comes back: held as before.
    const setJobStatus = (status: string, where: string) => {
      const db = new Database(path.join(first.root, 'data', 'studio.db'));
      db.prepare(`UPDATE items SET job_status = ? WHERE ${where}`).run(status);
      db.close();
    };
    setJobStatus('processing', 'job_id IS NOT NULL');
    const redeployed = await world({ numericJobIds: true, seed: 12 });
    const onSameData: ReferenceWorld = { ...redeployed, root: first.root };
    const run2 = await runOnce(onSameData, after!, { concurrency: 1 });
    expect(run2.failed[0]!.reason).toMatch(/another photo's job id \(\d+, held by p00\.jpg\)/);
    expect(netSpent(redeployed)).toBe(4);
    // Seen finished (as it was): the rerun collects the held photo's own job, paying nothing.
    setJobStatus('completed', "state = 'exported'");
    const run3 = await runOnce(onSameData, after!, { concurrency: 1 });
    expect(run3.failed).toEqual([]);
    expect(netSpent(redeployed)).toBe(4);
    expect(outFiles(first)).toHaveLength(2);
  }, 90_000);

  it("answering a new create with a finished job's id, results and all: still another photo's job", async () => {
    const w = await world({ sameJobIdForEveryCreate: true });
    const [before, after] = await photoFolders(w, [1, 1]);
    const run1 = await runOnce(w, before!, { concurrency: 1 });
    expect(run1.exported).toBe(1);
    // The next photo's create is answered with the first job's id; its answer lists that job's result.
    const run2 = await runOnce(w, after!, { concurrency: 1 });
    expect(netSpent(w)).toBe(8);
    expect(run2.exported).toBe(0);
    expect(run2.failed).toHaveLength(1);
    expect(run2.failed[0]!.reason).toMatch(/another photo's job id/);
    expect(outFiles(w)).toHaveLength(1);
    // A rerun collects nothing for it and pays nothing.
    const run3 = await runOnce(w, after!, { concurrency: 1 });
    expect(run3.failed[0]!.reason).toMatch(/another photo's job id/);
    expect(netSpent(w)).toBe(8);
    expect(outFiles(w)).toHaveLength(1);
  }, 90_000);
});
