/**
 * Export is per destination: a batch run again to another folder, or to the same folder after its
 * files were deleted, writes the files again and spends nothing (the paid results are reused);
 * run again where the files are, it skips each photo saying where and when it was exported.
 * Real studio database, real embedded core and ledger, real images.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessClient } from '../../src/client/in-process';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { prepareForUpload } from '../../src/studio/prepare';
import type { Recipe } from '../../src/shared/studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const recipe: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{tool}-{n}' },
};

async function photo(file: string, hue: number): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="500"><rect width="100%" height="100%" fill="#f4f4f2"/><rect x="100" y="100" width="200" height="300" rx="30" fill="hsl(${hue},70%,45%)"/></svg>`;
  await sharp(Buffer.from(svg)).jpeg({ quality: 88 }).toFile(file);
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('re-export per destination', () => {
  it('another --out, or deleted files, are written again for nothing; files in place are skipped with where and when', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-reexport-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const inDir = path.join(root, 'in');
    await photo(path.join(inDir, 'a.jpg'), 10);
    await photo(path.join(inDir, 'tops', 'b.jpg'), 200);
    const dataDir = path.join(root, 'data');
    const client = await InProcessClient.open({ dataDir: path.join(dataDir, 'core') });
    cleanups.push(() => client.close());
    const balance = async () => (await client.getAccount()).diamondBalance;
    const run = async (outDir: string) => {
      const engine = new StudioEngine({
        dataDir,
        client,
        prepareUpload: prepareForUpload,
        concurrency: 2,
      });
      try {
        return await runBatch(engine, { inDir, recipe, outDir });
      } finally {
        await engine.close();
      }
    };
    const expected = [
      'a-remove_background-1.png',
      path.join('tops', 'b-remove_background-1.png'),
    ].sort();
    const start = await balance();

    const outA = path.join(root, 'export-a');
    const first = await run(outA);
    expect(first).toMatchObject({ photos: 2, exported: 2, skipped: 0, diamondsSpent: 2 });
    expect(filesUnder(outA)).toEqual(expected);
    expect(await balance()).toBe(start - 2);

    // Another destination: the same files, nothing spent, no request to the service for a job.
    const outB = path.join(root, 'export-b');
    const second = await run(outB);
    expect(second).toMatchObject({
      photos: 2,
      exported: 2,
      skipped: 0,
      failed: [],
      diamondsSpent: 0,
    });
    expect(filesUnder(outB)).toEqual(expected);
    expect(await balance()).toBe(start - 2);
    for (const file of filesUnder(outB)) {
      expect(fs.readFileSync(path.join(outB, file))).toEqual(
        fs.readFileSync(path.join(outA, file)),
      );
      expect((await sharp(path.join(outB, file)).metadata()).hasAlpha).toBe(true);
    }
    expect(second.files.sort()).toEqual(expected.map((f) => path.join(outB, f)).sort());

    // Where the files are: skipped, saying where and when.
    const third = await run(outA);
    expect(third).toMatchObject({ photos: 2, exported: 0, skipped: 2, diamondsSpent: 0 });
    for (const skip of third.skippedPhotos) {
      expect(skip.reason).toMatch(
        new RegExp(
          `^already exported to ${outA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} on \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC \\(.+\\.png\\); nothing spent$`,
        ),
      );
    }
    expect(third.skippedPhotos.map((s) => s.name).sort()).toEqual(
      ['a.jpg', path.join('tops', 'b.jpg')].sort(),
    );

    // The files deleted: written again, nothing spent.
    fs.rmSync(outA, { recursive: true });
    const fourth = await run(outA);
    expect(fourth).toMatchObject({ photos: 2, exported: 2, skipped: 0, diamondsSpent: 0 });
    expect(filesUnder(outA)).toEqual(expected);

    // One file of two deleted: that photo alone is written again.
    fs.rmSync(path.join(outB, 'a-remove_background-1.png'));
    const fifth = await run(outB);
    expect(fifth).toMatchObject({ photos: 2, exported: 1, skipped: 1, diamondsSpent: 0 });
    expect(filesUnder(outB)).toEqual(expected);
    expect(await balance()).toBe(start - 2);
  });
});
