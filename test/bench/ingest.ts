/**
 * Hot-folder ingest: 1,000 photos dropped at once into a watched folder, time until every one is
 * queued (stable-size wait, decode check and hash included) and peak RSS, next to simply reading
 * and hashing the same files.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InProcessClient } from '../../src/client/in-process';
import { openStudio } from '../../src/studio';
import { fmt, tempDir, writePhotos, type Row } from './shared';

const SETTLE_MS = 300;

export async function ingest(count = 1000): Promise<Row[]> {
  const dir = tempDir('ingest');
  try {
    const staged = await writePhotos(path.join(dir, 'staged'), count, 800, 1000);
    const hashStart = performance.now();
    for (const file of staged)
      createHash('sha256')
        .update(await fs.promises.readFile(file))
        .digest('hex');
    const hashMs = performance.now() - hashStart;

    const hot = path.join(dir, 'hot');
    fs.mkdirSync(hot);
    const client = await InProcessClient.open({ dataDir: path.join(dir, 'data', 'core') });
    const studio = await openStudio({
      dataDir: path.join(dir, 'data'),
      client,
      settleMs: SETTLE_MS,
    });
    studio.engine.setPaused(true); // measure intake only: nothing is uploaded
    await studio.folders.add({
      path: hot,
      outputDir: path.join(dir, 'out'),
      recipe: {
        request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
        export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{tool}-{n}' },
      },
    });
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 25);
    const start = performance.now();
    // "Dropped at once": renames into the folder, as a file manager does within one volume.
    await Promise.all(
      staged.map((file) => fs.promises.rename(file, path.join(hot, path.basename(file)))),
    );
    const queued = () =>
      (
        studio.engine.db
          .prepare("SELECT COUNT(*) AS n FROM items WHERE state = 'queued'")
          .get() as { n: number }
      ).n;
    while (queued() < count) {
      if (performance.now() - start > 300_000)
        throw new Error(`only ${queued()} of ${count} queued after 5 minutes`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const ingestMs = performance.now() - start;
    clearInterval(sampler);
    await studio.close();
    await client.close();
    return [
      {
        name: `ingest of ${count} photos dropped at once (settle ${SETTLE_MS} ms) vs reading+hashing them`,
        measured: `${fmt(ingestMs / 1000, 2)} s vs ${fmt(hashMs / 1000, 2)} s, peak RSS ${fmt(peakRss / 2 ** 20, 0)} MiB`,
        ratio: ingestMs / hashMs,
        target: 'all queued',
        pass: true,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
