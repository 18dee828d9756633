/**
 * What a create's 2xx answer may look like beyond the spec's {success, id, status}, and a service
 * that lists a result URL twice (review rev12: D4, D8, D11). `run` as it drives
 * a remote service (HttpClient, StudioEngine, runBatch, the real SQLite store) against the
 * reference /v1 service; money is read from the service's own ledger.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'create-answers@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);

const outFiles = (w: ReferenceWorld) => {
  const dir = path.join(w.root, 'out');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
};
const digests = (w: ReferenceWorld) =>
  outFiles(w).map((f) =>
    createHash('sha256')
      .update(fs.readFileSync(path.join(w.root, 'out', f)))
      .digest('hex'),
  );
const polledPaths = (w: ReferenceWorld) =>
  w.service
    .requests()
    .filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/'))
    .map((r) => r.path);

describe("a create's 2xx answer in another shape", () => {
  it('wrapped as {success, data: {id}} with a numeric id (201): every paid job is collected', async () => {
    const w = await world({ createAnswer: 'wrapped', numericJobIds: true });
    const [photos] = await photoFolders(w, [3]);
    const summary = await runOnce(w, photos!);
    // Before: job id "undefined" polled, 3 failed "Generation ... not found", 12 paid for nothing.
    expect(polledPaths(w).some((p) => p.includes('undefined'))).toBe(false);
    expect(summary.failed).toEqual([]);
    expect(summary.uncertain).toEqual([]);
    expect(summary.exported).toBe(3);
    expect(netSpent(w)).toBe(12);
    expect(summary.diamondsSpent).toBe(12);
    expect(new Set(digests(w)).size).toBe(3);
  }, 90_000);

  it('{id, status} without success:true is a job: polled and collected, not a lost answer', async () => {
    const w = await world({ createAnswer: 'noSuccess' });
    const [photos] = await photoFolders(w, [2]);
    const summary = await runOnce(w, photos!);
    // Before: read as a lost answer (502), both uncertain, 8 paid and never collected.
    expect(summary.uncertain).toEqual([]);
    expect(summary.exported).toBe(2);
    expect(netSpent(w)).toBe(8);
    expect(summary.diamondsSpent).toBe(8);
  }, 90_000);

  it('with no job id anywhere: a charge whose job is unknown, never polled as "undefined"', async () => {
    const w = await world({ createAnswer: 'wrappedNoId' });
    const [photos] = await photoFolders(w, [1]);
    const summary = await runOnce(w, photos!);
    expect(polledPaths(w)).toEqual([]);
    expect(summary.exported).toBe(0);
    expect(summary.failed).toEqual([]);
    expect(summary.uncertain).toHaveLength(1);
    expect(summary.uncertain[0]!.reason).toMatch(/without a job id/);
    // Charged once; nothing sent again.
    expect(netSpent(w)).toBe(4);
  }, 90_000);
});

describe('a result URL listed twice', () => {
  it('is exported once', async () => {
    const w = await world({ duplicateResultUrls: true });
    const [photos] = await photoFolders(w, [2]);
    const summary = await runOnce(w, photos!);
    // Before: 4 files, in byte-identical pairs.
    expect(summary.exported).toBe(2);
    expect(outFiles(w)).toHaveLength(2);
    expect(new Set(digests(w)).size).toBe(2);
    expect(netSpent(w)).toBe(8);
  }, 90_000);
});
