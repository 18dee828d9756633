/**
 * Set-up shared by the tests of prices read from the shared balance (studio-price-reading,
 * studio-price-evidence, studio-price-confirmed): `run` against a reference world, photo folders
 * for successive runs, the studio's store opened as a new run would, and what the service's
 * ledger shows the studio's jobs took.
 */
import fs from 'node:fs';
import path from 'node:path';
import { HttpClient } from '../../../src/client';
import type { Recipe } from '../../../src/shared/studio';
import { StudioEngine, type EngineOptions } from '../../../src/studio/engine';
import { runBatch } from '../../../src/studio/run-batch';
import type { ReferenceServiceOptions } from '../../reference-service';
import { startFaultProxy } from '../../reference-service/fault-proxy';
import { referenceWorld, type ReferenceWorld } from './reference-studio';
import { shapePhotos } from './studio-fixtures';

/** virtual_model: 4 diamonds at the reference service's list. */
export const ON_MODEL: Recipe = {
  request: {
    toolId: 'virtual_model',
    images: { fashion_model: 'person-001', garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};

/** Diamonds the studio's jobs took and kept (grants and the service's own apps left out). */
export const netSpent = (w: ReferenceWorld, email: string) =>
  w.service
    .ledger(email)
    .filter((e) => e.kind === 'charge' || e.kind === 'refund')
    .reduce((sum, e) => sum - e.delta, 0);

/** Folders of `sizes` distinct photos each, one per later run. */
/** The price tests' world (seeded reference service, fast jobs) for one account, and its net spend. */
export function priceWorlds(
  cleanups: (() => Promise<void> | void)[],
  email: string,
  diamonds: number,
) {
  return {
    world: (service: ReferenceServiceOptions) =>
      referenceWorld(cleanups, {
        email,
        diamonds,
        service: { seed: 11, timeScale: 0.01, ...service },
      }),
    netSpent: (w: ReferenceWorld) => netSpent(w, email),
  };
}

export async function photoFolders(w: ReferenceWorld, sizes: number[]): Promise<string[]> {
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

/**
 * A studio engine on the world's store, reaching the service directly or through `via` (a fault
 * proxy's URL), with quick back-offs; closed with the test.
 */
export function engineOnWorld(
  w: ReferenceWorld,
  cleanups: (() => Promise<void> | void)[],
  options: Partial<Omit<EngineOptions, 'dataDir' | 'client' | 'apiKey'>> & { via?: string } = {},
): StudioEngine {
  const { via, ...engineOptions } = options;
  const client = new HttpClient({
    baseUrl: via ?? w.service.url,
    apiKey: w.apiKey,
    timeoutMs: 5000,
  });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    backoff: { baseMs: 50, maxMs: 200 },
    balanceRecheckMs: 100,
    ...engineOptions,
  });
  cleanups.push(async () => {
    await engine.close();
    await client.close();
  });
  return engine;
}

export type RunOpts = {
  maxDiamonds?: number;
  /** ON_MODEL unless given. */
  recipe?: Recipe;
  /** Called once after the `n`-th create is answered (the service's own apps moving the balance). */
  afterCreate?: { n: number; fn: () => void };
  onFirstPoll?: () => void;
  now?: () => Date;
  /** `--wait`, with a closed day probed every `capProbeMs`. */
  wait?: { capProbeMs?: number };
  /** `--uncertain`. */
  uncertain?: 'resubmit' | 'fail';
  /** The answer to the first `POST /v1/generations` is lost (charged, never read): a fault proxy in between. */
  loseFirstCreate?: boolean;
  /** Steps at once (4 unless given). */
  concurrency?: number;
  /** The engine's `balanceRecheckMs` (100 unless given; a reading below its list prices is read again from half of it on). */
  balanceRecheckMs?: number;
  /** Balance reads (`GET /v1/account`) answered 500 after the first `failAfter`; `seen` counts them all. */
  accountReads?: { failAfter: number; seen: number };
};

/** One `run` of ON_MODEL (or `opts.recipe`) over `inDir` on the world's store. */
export async function runOnce(w: ReferenceWorld, inDir: string, opts: RunOpts = {}) {
  let lost = false;
  const reads = opts.accountReads;
  const proxy =
    opts.loseFirstCreate || reads
      ? await startFaultProxy({
          target: w.service.url,
          choose: (method, p) => {
            if (reads && method === 'GET' && p === '/v1/account')
              return ++reads.seen > reads.failAfter ? 'error500Before' : null;
            if (!opts.loseFirstCreate || lost || method !== 'POST' || p !== '/v1/generations')
              return null;
            lost = true;
            return 'dropAfter';
          },
        })
      : null;
  const client = new HttpClient({
    baseUrl: proxy?.url ?? w.service.url,
    apiKey: w.apiKey,
    timeoutMs: 5000,
  });
  if (opts.onFirstPoll) {
    const poll = client.getGeneration.bind(client);
    let first = true;
    client.getGeneration = (id) => {
      if (first) opts.onFirstPoll!();
      first = false;
      return poll(id);
    };
  }
  if (opts.afterCreate) {
    const create = client.createGeneration.bind(client);
    let creates = 0;
    client.createGeneration = async (...args: Parameters<typeof create>) => {
      const answer = await create(...args);
      if (++creates === opts.afterCreate!.n) opts.afterCreate!.fn();
      return answer;
    };
  }
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    concurrency: opts.concurrency ?? 4,
    backoff: { baseMs: 50, maxMs: 400 },
    balanceRecheckMs: opts.balanceRecheckMs ?? 100,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.wait?.capProbeMs !== undefined ? { capProbeMs: opts.wait.capProbeMs } : {}),
  });
  try {
    return await runBatch(engine, {
      ...(opts.wait ? { wait: true } : {}),
      ...(opts.uncertain ? { uncertain: opts.uncertain } : {}),
      inDir,
      recipe: opts.recipe ?? ON_MODEL,
      outDir: path.join(w.root, 'out'),
      ...(opts.maxDiamonds !== undefined ? { maxDiamonds: opts.maxDiamonds } : {}),
    });
  } finally {
    await engine.close();
    await client.close();
    await proxy?.close();
  }
}

/**
 * Opens the studio's store of the world (as a new run would) for `fn`, after reading the price
 * list unless `readPrices` is false (then nothing is asked of the service).
 */
export async function withEngine<T>(
  w: ReferenceWorld,
  fn: (engine: StudioEngine) => T,
  now?: () => Date,
  readPrices = true,
): Promise<T> {
  const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    ...(now ? { now } : {}),
  });
  try {
    if (readPrices) await engine.spending.loadPrices();
    return fn(engine);
  } finally {
    await engine.close();
    await client.close();
  }
}

/** The price the studio plans `virtual_model` with, as a new run would. */
export const plannedPrice = (w: ReferenceWorld) =>
  withEngine(w, (e) => e.spending.toolPrice('virtual_model'));
