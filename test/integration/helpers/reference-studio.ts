/**
 * `dropshoot run` against the reference /v1 service (written from the spec alone): a temporary
 * world (the service, an account, photos) and runs of the studio on its data folder, each one
 * continuing the one before, as the CLI drives them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { HttpClient } from '../../../src/client';
import type { Recipe } from '../../../src/shared/studio';
import { openStudio, type Studio } from '../../../src/studio';
import { StudioEngine } from '../../../src/studio/engine';
import { runBatch } from '../../../src/studio/run-batch';
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

/** One `run` of the studio on the world's data folder. */
export async function runOnWorld(
  w: ReferenceWorld,
  opts: {
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
    /** Where the client sends its requests (a fault proxy before the service); the service's own by default. */
    baseUrl?: string;
  } = {},
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
  });
  try {
    return await runBatch(engine, {
      inDir: opts.folders?.inDir ?? w.inDir,
      recipe: opts.recipe ?? CUTOUT_RECIPE,
      outDir: opts.folders?.outDir ?? path.join(w.root, 'out'),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.giveUpAfterMs !== undefined ? { giveUpAfterMs: opts.giveUpAfterMs } : {}),
    });
  } finally {
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

/** The studio (hot folders, commands) on the world's data folder, closed with the test. */
export async function studioOnWorld(w: ReferenceWorld, cleanups: Cleanups): Promise<Studio> {
  const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const studio = await openStudio({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    backoff: { baseMs: 50, maxMs: 50 },
  });
  cleanups.push(async () => {
    await studio.close();
    await client.close();
  });
  return studio;
}
