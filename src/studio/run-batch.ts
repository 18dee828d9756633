/**
 * `dropshoot run`: one batch over every image under a folder, to the end, with results approved
 * automatically and exported. Sources stay where they are.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Recipe } from '../shared/studio';
import type { StudioEngine } from './engine';
import * as store from './db/store';
import { isIgnored } from './watch/ignore';
import { exportAgainIfMissing } from './export/destination';

export type BatchSummary = {
  batchId: string;
  photos: number;
  exported: number;
  skipped: number;
  failed: { name: string; reason: string }[];
  uncertain: { name: string; reason: string }[];
  /** Photos not started because the batch reached its diamond ceiling (`--max-diamonds`). */
  held: { name: string; reason: string }[];
  /** Why each skipped photo was skipped (already exported to this folder, and when). */
  skippedPhotos: { name: string; reason: string }[];
  /** Set when a signal stopped the run: the photos it left for the next run, with their state. */
  interrupted?: { signal: string; unfinished: { name: string; state: string }[] };
  diamondsSpent: number;
  apiRequests: number;
  files: string[];
};

const IMAGE_EXT = /\.(jpe?g|png|webp|tiff?|heic|heif|avif)$/i;

async function* imagesUnder(root: string, rel = ''): AsyncGenerator<string> {
  const entries = await fs.promises.readdir(path.join(root, rel), { withFileTypes: true });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const relPath = rel ? `${rel}/${entry.name}` : entry.name;
    if (isIgnored(relPath, entry.isDirectory())) continue;
    if (entry.isDirectory()) yield* imagesUnder(root, relPath);
    else if (entry.isFile() && IMAGE_EXT.test(entry.name)) yield path.join(root, relPath);
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function runBatch(engine: StudioEngine, input: { inDir: string; recipe: Recipe; outDir: string; maxDiamonds?: number; signal?: AbortSignal }): Promise<BatchSummary> {
  const day = engine.now().toISOString().slice(0, 10);
  const requestsBefore = store.requestsOn(engine.db, engine.client.origin, day);
  const batchId = engine.createBatch({ kind: 'run', outputDir: input.outDir, autoApprove: true, ceiling: input.maxDiamonds ?? null });
  let photos = 0;
  const { signal } = input;
  for await (const file of imagesUnder(input.inDir)) {
    if (signal?.aborted) break;
    const queued = engine.enqueue({ batchId, sourcePath: file, rootDir: input.inDir, sha256: await sha256Of(file), recipe: input.recipe });
    // Done before with this recipe: skipped only if its files are in --out; else exported again, for nothing.
    if (queued.state === 'skipped') exportAgainIfMissing(engine.db, queued.id, input.outDir, engine.now());
    photos++;
  }
  if (!signal?.aborted) {
    engine.start();
    // Headless, nobody can lift a ceiling: photos it holds back end the run (a rerun continues them).
    const stopped = new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.race([engine.waitForBatch(batchId, undefined, ['ceiling']), stopped]);
  }
  // Stopped by a signal: running steps reach a safe point before the summary is read.
  if (signal?.aborted) await engine.stop();
  const { items } = store.listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 });
  const reason = (i: store.ItemRow) => i.error ?? i.note ?? i.waitReason ?? 'unknown';
  return {
    batchId,
    photos,
    exported: items.filter((i) => i.state === 'exported').length,
    skipped: items.filter((i) => i.state === 'skipped').length,
    failed: items.filter((i) => i.state === 'failed' || i.state === 'cancelled').map((i) => ({ name: path.join(i.relativeDir, i.name), reason: reason(i) })),
    // Why it is uncertain (the note) matters more than the network error that led there.
    uncertain: items.filter((i) => i.uncertain === 1).map((i) => ({ name: path.join(i.relativeDir, i.name), reason: i.note ?? reason(i) })),
    held: items
      .filter((i) => i.state === 'queued' && i.waitReason === 'ceiling')
      .map((i) => ({ name: path.join(i.relativeDir, i.name), reason: `not started: the batch reached its ceiling of ${input.maxDiamonds} diamonds` })),
    skippedPhotos: items.filter((i) => i.state === 'skipped').map((i) => ({ name: path.join(i.relativeDir, i.name), reason: i.note ?? 'skipped' })),
    ...(signal?.aborted
      ? { interrupted: { signal: String(signal.reason), unfinished: items.filter((i) => !engine.isTerminal(i.state) && i.state !== 'review').map((i) => ({ name: path.join(i.relativeDir, i.name), state: i.state })) } }
      : {}),
    diamondsSpent: items.reduce((sum, i) => sum + i.diamonds, 0),
    apiRequests: store.requestsOn(engine.db, engine.client.origin, day) - requestsBefore,
    files: items.flatMap((i) => store.resultsOf(engine.db, i.id).map((r) => r.exportedPath).filter((p): p is string => p !== null)),
  };
}
