/**
 * `dropshoot run` against the reference /v1 service (written from the spec alone): a temporary
 * world (the service, an account, photos) and runs of the studio on its data folder, each one
 * continuing the one before, as the CLI drives them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { expect } from 'vitest';
import { HttpClient } from '../../../src/client';
import type { Recipe } from '../../../src/shared/studio';
import { openStudio, type Studio } from '../../../src/studio';
import * as store from '../../../src/studio/db/store';
import { StudioEngine, type EngineOptions } from '../../../src/studio/engine';
import { runBatch, type BatchSummary } from '../../../src/studio/run-batch';
import { CUTOUT_RECIPE } from './studio-fixtures';
import {
  startReferenceService,
  type ReferenceService,
  type ReferenceServiceOptions,
} from '../../reference-service';

export type ReferenceWorld = {
  root: string;
  service: ReferenceService;
  apiKey: string;
  inDir: string;
};

type Cleanups = (() => Promise<void> | void)[];

/** A service with `options`, an account of `email` holding `diamonds`, and `photos` photos. */
export async function referenceWorld(
  cleanups: Cleanups,
  opts: { email: string; diamonds: number; service: ReferenceServiceOptions; photos?: number },
): Promise<ReferenceWorld> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-latitude-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService(opts.service);
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: opts.email, diamonds: opts.diamonds });
  const inDir = path.join(root, 'in');
  fs.mkdirSync(inDir);
  for (let i = 0; i < (opts.photos ?? 1); i++)
    await sharp({
      create: { width: 320, height: 400, channels: 3, background: { r: 60 * i, g: 120, b: 90 } },
    })
      .jpeg()
      .toFile(path.join(inDir, `p${i}.jpg`));
  return { root, service, apiKey, inDir };
}

export type RunOnWorldOptions = {
  recipe?: Recipe;
  backoffMs?: number;
  /** Retry back-off range; default `backoffMs` to `backoffMs`. */
  backoff?: { baseMs: number; maxMs: number };
  concurrency?: number;
  Client?: typeof HttpClient;
  signal?: AbortSignal;
  /** The folder run over and exported to; the world's own unless given. */
  folders?: { inDir: string; outDir: string };
  /** `--give-up-after` in ms (default 30 min). */
  giveUpAfterMs?: number;
  /** `--max-diamonds`: the batch's ceiling. */
  maxDiamonds?: number;
  /** `--uncertain`: what the run does with a photo whose create answer was lost. */
  uncertain?: 'resubmit' | 'fail';
  /** Where the client sends its requests (a fault proxy before the service); the service's own by default. */
  baseUrl?: string;
  /** More of the engine's options (a clock, the key's grace, the poll gap...). */
  engine?: Partial<Omit<EngineOptions, 'dataDir' | 'client' | 'apiKey'>>;
  /** How often the run tells its progress (`onNotice`). */
  progressEveryMs?: number;
  onNotice?: (line: string) => void;
};

/** One `run` of the studio on the world's data folder. */
export async function runOnWorld(w: ReferenceWorld, opts: RunOnWorldOptions = {}) {
  return (await runWithEngine(w, opts, () => () => {})).summary;
}

/**
 * One `run` as `runOnWorld`, with what it told (each line's time from the start), the studio's
 * items once it ended and how long it took; `onTick` sees the items every 100 ms while it runs.
 */
export async function runToldOnWorld(
  w: ReferenceWorld,
  opts: RunOnWorldOptions & { onTick?: (items: store.ItemRow[]) => void } = {},
) {
  const lines: { at: number; line: string }[] = [];
  const startedAt = Date.now();
  let items: store.ItemRow[] = [];
  const list = (engine: StudioEngine) =>
    store.listItems(engine.db, { limit: 1000, offset: 0 }).items;
  const { summary } = await runWithEngine(
    w,
    {
      ...opts,
      onNotice: (line) => {
        lines.push({ at: Date.now() - startedAt, line });
        opts.onNotice?.(line);
      },
    },
    (engine) => {
      const watch = setInterval(() => opts.onTick?.(list(engine)), 100);
      return () => {
        clearInterval(watch);
        items = list(engine);
      };
    },
  );
  return { summary, lines, items, ms: Date.now() - startedAt };
}

/** The run itself; `watch` starts with the engine and its returned function ends before it closes. */
async function runWithEngine(
  w: ReferenceWorld,
  opts: RunOnWorldOptions,
  watch: (engine: StudioEngine) => () => void,
) {
  const Client = opts.Client ?? HttpClient;
  const backoffMs = opts.backoffMs ?? 50;
  const client = new Client({
    baseUrl: opts.baseUrl ?? w.service.url,
    apiKey: w.apiKey,
    timeoutMs: 5000,
  });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    concurrency: opts.concurrency ?? 2,
    backoff: opts.backoff ?? { baseMs: backoffMs, maxMs: backoffMs },
    capProbeMs: 60_000,
    ...opts.engine,
  });
  const stopWatching = watch(engine);
  try {
    const summary = await runBatch(engine, {
      inDir: opts.folders?.inDir ?? w.inDir,
      recipe: opts.recipe ?? CUTOUT_RECIPE,
      outDir: opts.folders?.outDir ?? path.join(w.root, 'out'),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.giveUpAfterMs !== undefined ? { giveUpAfterMs: opts.giveUpAfterMs } : {}),
      ...(opts.maxDiamonds !== undefined ? { maxDiamonds: opts.maxDiamonds } : {}),
      ...(opts.uncertain ? { uncertain: opts.uncertain } : {}),
      ...(opts.progressEveryMs !== undefined ? { progressEveryMs: opts.progressEveryMs } : {}),
      ...(opts.onNotice ? { onNotice: opts.onNotice } : {}),
    });
    return { summary };
  } finally {
    stopWatching();
    await engine.close();
    await client.close();
  }
}

/** A signal that stops a run as SIGTERM would after `ms`, so a run that hangs fails its test. */
export function stopAfter(cleanups: Cleanups, ms: number): AbortSignal {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('SIGTERM'), ms);
  cleanups.push(() => clearTimeout(timer));
  return stop.signal;
}

/** Diamonds the service's ledger charged to `email` (refunds not netted). */
export function chargedTo(service: ReferenceService, email: string): number {
  return service
    .ledger(email)
    .filter((e) => e.kind === 'charge')
    .reduce((sum, e) => sum - e.delta, 0);
}

/**
 * A run that met a limit and waited it out: it ended by itself with every photo exported and none
 * held, failed or left for tomorrow, each photo one job paid once, and the spend it reports is
 * the ledger's.
 */
export function expectEveryPhotoPaidOnce(
  summary: BatchSummary,
  service: ReferenceService,
  email: string,
  photos: number,
): void {
  expect(summary.interrupted).toBeUndefined();
  expect(summary.collectTomorrow ?? []).toEqual([]);
  expect(summary.held).toEqual([]);
  expect(summary.failed).toEqual([]);
  expect(summary.exported).toBe(photos);
  expect(service.jobs(email)).toHaveLength(photos);
  expect(chargedTo(service, email)).toBe(photos);
  expect(summary.diamondsSpent).toBe(photos);
}

/** The studio (hot folders, commands) on the world's data folder, closed with the test. */
export async function studioOnWorld(
  w: ReferenceWorld,
  cleanups: Cleanups,
  engine: Partial<Omit<EngineOptions, 'dataDir' | 'client' | 'apiKey'>> = {},
): Promise<Studio> {
  const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const studio = await openStudio({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    backoff: { baseMs: 50, maxMs: 50 },
    ...engine,
  });
  cleanups.push(async () => {
    await studio.close();
    await client.close();
  });
  return studio;
}
