/**
 * Whose job a job id the service hands out again is, told by the bytes it delivers, not by its
 * URLs. Review rev24 R4: a service answering every create with the first job's id, its result
 * files since moved to another host, had the second photo export the first photo's result under
 * its own name (exit 0). Review rev23 N3 (with 3442bab): a service whose ids restarted and that
 * names result files after the job id lists the very URLs of the earlier job, and the new photos
 * were paid and never collected. `run` as it drives a remote service (HttpClient, StudioEngine,
 * runBatch, the real SQLite store) against the reference /v1 service; money from its own ledger.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceService } from '../reference-service';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'id-bytes@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);

const outDir = (w: ReferenceWorld) => path.join(w.root, 'out');
const outFiles = (w: ReferenceWorld) =>
  fs.existsSync(outDir(w)) ? fs.readdirSync(outDir(w)).sort() : [];
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const portOf = (url: string) => Number(new URL(url).port);

/**
 * The service redeployed on a new store at the same address: its ids start again and, with
 * resultFilesNamedAfterJob, so do its file URLs. The world on the same data folder.
 */
async function redeployed(
  first: ReferenceWorld,
  seed: number,
  options: Parameters<typeof startReferenceService>[0],
): Promise<ReferenceWorld> {
  await first.service.close();
  const service = await startReferenceService(
    { ...options, seed, timeScale: 0.01 },
    { port: portOf(first.service.url), resultsPort: portOf(first.service.resultsUrl) },
  );
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 500 });
  return { ...first, service, apiKey };
}

describe('a job id handed out again, told by its bytes', () => {
  it("the same id answered with the first job's files on another host: not exported as the second photo's", async () => {
    const w = await world({ sameJobIdForEveryCreate: true });
    const [before, after] = await photoFolders(w, [1, 1]);
    expect((await runOnce(w, before!, { concurrency: 1 })).exported).toBe(1);
    const [firstOut] = outFiles(w);
    // The files move to a CDN: the same result under another origin and path.
    w.service.setOptions({ resultsOnOtherHost: true });
    const run2 = await runOnce(w, after!, { concurrency: 1 });
    // Before: exported 1, the second photo's file byte-identical to the first's.
    expect(netSpent(w)).toBe(8);
    expect(run2.exported).toBe(0);
    expect(run2.failed).toHaveLength(1);
    expect(run2.failed[0]!.reason).toMatch(/another photo's job id \(.+, held by p00\.jpg\)/);
    expect(outFiles(w)).toEqual([firstOut]);
    // A rerun collects nothing for it and pays nothing.
    const run3 = await runOnce(w, after!, { concurrency: 1 });
    expect(run3.exported).toBe(0);
    expect(run3.failed[0]!.reason).toMatch(/another photo's job id/);
    expect(netSpent(w)).toBe(8);
    expect(outFiles(w)).toEqual([firstOut]);
  }, 90_000);

  it('ids restarted on the same address, files named after the job id: every photo collects its own result', async () => {
    const options = { numericJobIds: true, resultFilesNamedAfterJob: true };
    const first = await world(options);
    const [before, after] = await photoFolders(first, [3, 3]);
    expect((await runOnce(first, before!, { concurrency: 1 })).exported).toBe(3);
    // Redeployed on a new store at the same address: ids from 1001 again, the same file URLs.
    const onSameData = await redeployed(first, 12, options);
    const run2 = await runOnce(onSameData, after!, { concurrency: 1 });
    // Before: 12 charged, 0 exported, 3 failed "another photo's job id (1001, held by p00.jpg)".
    expect(netSpent(onSameData)).toBe(12);
    expect(run2.failed).toEqual([]);
    expect(run2.exported).toBe(3);
    const files = outFiles(first);
    expect(files).toHaveLength(6);
    // Each photo's own result: six different files.
    expect(new Set(files.map((f) => sha(path.join(outDir(first), f)))).size).toBe(6);
    // Nothing left to collect, nothing paid again.
    const run3 = await runOnce(onSameData, after!, { concurrency: 1 });
    expect(run3.failed).toEqual([]);
    expect(netSpent(onSameData)).toBe(12);
    expect(outFiles(first)).toHaveLength(6);
  }, 90_000);

  it("ids restarted before the first photo collected its result: it does not export the later photo's", async () => {
    const options = { numericJobIds: true, resultFilesNamedAfterJob: true };
    // The first photo is paid and listed, its result never downloaded (every body cut short).
    const first = await world({ ...options, truncateResultBodies: -1 });
    const [before, after] = await photoFolders(first, [1, 1]);
    expect((await runOnce(first, before!, { concurrency: 1 })).exported).toBe(0);
    const onSameData = await redeployed(first, 13, options);
    // The later photo is given the first one's id: whose job it names cannot be told, it is held.
    const run2 = await runOnce(onSameData, after!, { concurrency: 1 });
    expect(run2.exported).toBe(0);
    // The first photo taken up again: the id now names the later photo's job (review rev26 2).
    const run3 = await runOnce(onSameData, before!, { concurrency: 1 });
    // Before: exported 1, the later photo's result under the first photo's name.
    expect(run3.exported).toBe(0);
    expect(run3.failed[0]!.reason).toMatch(
      /job id \(\d+\) to a photo sent after it too \(p01\.jpg\)/,
    );
    expect(outFiles(first)).toEqual([]);
    expect(netSpent(onSameData)).toBe(4);
  }, 120_000);
});
