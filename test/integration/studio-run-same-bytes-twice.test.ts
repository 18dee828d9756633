/**
 * The same photo (same bytes) in two subfolders of one `--in` (review rev30 D4): one item, paid
 * once, but the second copy dropped out of the summary (3 photos, 2 exported, nothing failed or
 * held: exit 1 with no reason) and its subfolder never got its file. Its files are copied there,
 * paid once. `run` against the reference /v1 service; money from the service's ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('the same photo in two subfolders', () => {
  it('is paid once and exported into both subfolders; every photo is accounted for', async () => {
    const { world, netSpent } = priceWorlds(cleanups, 'twins@example.com', 100);
    const w = await world({});
    const [flat] = await photoFolders(w, [2]);
    const inDir = path.join(w.root, 'twins-in');
    for (const sub of ['a', 'b', 'c']) fs.mkdirSync(path.join(inDir, sub), { recursive: true });
    fs.copyFileSync(path.join(flat!, 'p00.jpg'), path.join(inDir, 'a', 'sku.jpg'));
    fs.copyFileSync(path.join(flat!, 'p00.jpg'), path.join(inDir, 'b', 'sku.jpg'));
    fs.copyFileSync(path.join(flat!, 'p01.jpg'), path.join(inDir, 'c', 'sku.jpg'));
    const summary = await runOnce(w, inDir);
    expect({ photos: summary.photos, exported: summary.exported, held: summary.held }).toEqual({
      photos: 3,
      exported: 3,
      held: [],
    });
    // virtual_model: 4 diamonds each, two jobs.
    expect(netSpent(w)).toBe(8);
    const out = path.join(w.root, 'out');
    for (const sub of ['a', 'b', 'c']) expect(fs.readdirSync(path.join(out, sub))).toHaveLength(1);
    expect(fs.readFileSync(path.join(out, 'b', fs.readdirSync(path.join(out, 'b'))[0]!))).toEqual(
      fs.readFileSync(path.join(out, 'a', fs.readdirSync(path.join(out, 'a'))[0]!)),
    );
    // Run again: nothing spent, every photo accounted for.
    const again = await runOnce(w, inDir);
    expect(again.exported + again.skipped).toBe(3);
    expect(netSpent(w)).toBe(8);
  }, 60_000);
});
