import fs from 'node:fs';
import path from 'node:path';
import { isIgnored } from './ignore';

/**
 * Files under `root` that a hot folder may hold photos in, in name order: hidden files, litter
 * and the app's own `done/` and `failed/` are left out (`isIgnored`), and never walked into.
 * With `followSymlinks`, a linked folder is walked like a real one, each real folder once, so a
 * link back up cannot loop; without it, links are skipped.
 */
export async function* filesUnder(
  root: string,
  options: { followSymlinks: boolean },
  rel = '',
  seen = new Set([fs.realpathSync.native(root)]),
): AsyncGenerator<string> {
  const entries = await fs.promises
    .readdir(path.join(root, rel), { withFileTypes: true })
    .catch((error: NodeJS.ErrnoException) => {
      // A subfolder moved or deleted while we walk is simply not there any more.
      if (rel !== '' && (error.code === 'ENOENT' || error.code === 'ENOTDIR')) return [];
      throw error;
    });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const relPath = rel ? `${rel}/${entry.name}` : entry.name;
    const full = path.join(root, relPath);
    if (entry.isSymbolicLink() && !options.followSymlinks) continue;
    const target = entry.isSymbolicLink() ? await fs.promises.stat(full).catch(() => null) : entry;
    if (!target || isIgnored(relPath, target.isDirectory())) continue;
    if (target.isDirectory()) {
      const real = await fs.promises.realpath(full).catch(() => null);
      if (real === null || seen.has(real)) continue;
      seen.add(real);
      yield* filesUnder(root, options, relPath, seen);
    } else if (target.isFile()) yield full;
  }
}
