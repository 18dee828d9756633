/** Where folders really are, and whether one lies inside another (symlinks and `..` resolved). */
import fs from 'node:fs';
import path from 'node:path';

/**
 * The real location of a path: symlinks and `..` resolved. A path not made yet (an output folder
 * the first export creates) is its nearest existing parent's real location plus the rest.
 */
export function realLocation(p: string): string {
  const absolute = path.resolve(p);
  try {
    return fs.realpathSync.native(absolute);
  } catch {
    const parent = path.dirname(absolute);
    return parent === absolute
      ? absolute
      : path.join(realLocation(parent), path.basename(absolute));
  }
}

/** Whether `child` lies strictly inside `parent` (both real locations). */
export const isInside = (child: string, parent: string): boolean => {
  const relative = path.relative(parent, child);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
};
