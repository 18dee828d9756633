/**
 * What a price read from the shared balance is worth (spec §1 rule 2: the service's own apps
 * spend and credit the same balance): one reading can be a credit masking a surcharge or an app's
 * debit, so it is planned with (the latest reading, never below the list) and is never sure. Against the
 * reference /v1 service (written from the spec alone) through `run`'s own path; money is checked
 * from the service's ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import type { ReferenceServiceOptions } from '../reference-service';
import { referenceWorld, type ReferenceWorld } from './helpers/reference-studio';
import { shapePhotos } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'price-evidence@ref.test';

/** virtual_model: 4 diamonds at the reference service's list. */
const ON_MODEL: Recipe = {
  request: {
    toolId: 'virtual_model',
    images: { fashion_model: 'person-001', garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};

const world = (service: ReferenceServiceOptions) =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 200,
    service: { seed: 11, timeScale: 0.01, ...service },
  });

/** Diamonds the studio's jobs took and kept (grants and the service's own apps left out). */
const netSpent = (w: ReferenceWorld) =>
  w.service
    .ledger(EMAIL)
    .filter((e) => e.kind === 'charge' || e.kind === 'refund')
    .reduce((sum, e) => sum - e.delta, 0);

/** Folders of `sizes` distinct photos each, one per later run. */
async function photoFolders(w: ReferenceWorld, sizes: number[]): Promise<string[]> {
  const all = path.join(w.root, 'all');
  await shapePhotos(
    all,
    sizes.reduce((a, b) => a + b, 0),
  );
  const names = fs.readdirSync(all).sort();
  let at = 0;
  return sizes.map((size, i) => {
    const dir = path.join(w.root, `photos-${i}`);
    fs.mkdirSync(dir);
    for (const n of names.slice(at, at + size))
      fs.copyFileSync(path.join(all, n), path.join(dir, n));
    at += size;
    return dir;
  });
}

async function runOnce(
  w: ReferenceWorld,
  inDir: string,
  opts: { maxDiamonds?: number; onFirstPoll?: () => void } = {},
) {
  const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey, timeoutMs: 5000 });
  if (opts.onFirstPoll) {
    const poll = client.getGeneration.bind(client);
    let first = true;
    client.getGeneration = (id) => {
      if (first) opts.onFirstPoll!();
      first = false;
      return poll(id);
    };
  }
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    concurrency: 4,
    backoff: { baseMs: 50, maxMs: 400 },
    balanceRecheckMs: 100,
  });
  try {
    return await runBatch(engine, {
      inDir,
      recipe: ON_MODEL,
      outDir: path.join(w.root, 'out'),
      ...(opts.maxDiamonds !== undefined ? { maxDiamonds: opts.maxDiamonds } : {}),
    });
  } finally {
    await engine.close();
    await client.close();
  }
}

/** The price the studio plans `virtual_model` with, as a new run would. */
async function plannedPrice(w: ReferenceWorld) {
  const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey });
  const engine = new StudioEngine({ dataDir: path.join(w.root, 'data'), client, apiKey: w.apiKey });
  try {
    await engine.spending.loadPrices();
    return engine.spending.toolPrice('virtual_model');
  } finally {
    await engine.close();
    await client.close();
  }
}

describe('a price read once from the shared balance', () => {
  it('a credit masking a surcharge: the next run keeps --max-diamonds 12', async () => {
    // Charged 6 a photo (list 4); the service's own apps credit 4 at run 1's first poll, so the
    // balance shows 8 for two charges: the list price, read as the price.
    const w = await world({ chargeExtra: 2, creditOnFirstPoll: 4 });
    const [first, second, third] = await photoFolders(w, [2, 4, 2]);
    const one = await runOnce(w, first!);
    expect(one.exported).toBe(2);
    expect(netSpent(w)).toBe(12);

    // Run 2: four photos under a ceiling of 12 (before: the 4 read was sure, three went: 18).
    const two = await runOnce(w, second!, { maxDiamonds: 12 });
    const spentByTwo = netSpent(w) - 12;
    expect(spentByTwo).toBeLessThanOrEqual(12);
    expect(two.exported).toBe(2);
    expect(two.held).toHaveLength(2);

    // Run 3 reads 6 again: two readings agree, yet a balance reading is never sure (any of them
    // may carry a credit or an app's debit): planned at 6 with its margin, the ceiling kept.
    const three = await runOnce(w, third!, { maxDiamonds: 12 });
    // (6 + its margin of 2 = 8 a photo: one fits 12; before, 6 sure filled it exactly with two).
    expect(netSpent(w) - 12 - spentByTwo).toBe(6);
    expect(three.exported).toBe(1);
    expect(await plannedPrice(w)).toEqual({ diamonds: 6, sure: false });
  }, 60_000);

  it("a debit by the service's own apps is not learnt as a sure price; the next readings relearn the real one", async () => {
    // Two photos at 4; the service's own app spends 40 at run 1's first poll: the balance shows 48.
    const w = await world({});
    const [first, second, third] = await photoFolders(w, [2, 2, 2]);
    const one = await runOnce(w, first!, { onFirstPoll: () => w.service.grant(EMAIL, -40) });
    expect(one.exported).toBe(2);
    // Planned with (never below what was seen), but not sure: its margin is kept.
    expect(await plannedPrice(w)).toEqual({ diamonds: 24, sure: false });
    // A later reading lowers the plan at once (an app's debit read once stops nothing for long);
    // agreeing readings stay unsure: only a price the service names drops the margin.
    await runOnce(w, second!);
    expect(await plannedPrice(w)).toEqual({ diamonds: 4, sure: false });
    await runOnce(w, third!);
    expect(await plannedPrice(w)).toEqual({ diamonds: 4, sure: false });
    expect(netSpent(w)).toBe(24);
  }, 60_000);
});
