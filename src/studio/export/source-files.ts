import fs from 'node:fs/promises';
import path from 'node:path';
import {
  discardTemp,
  errorCode,
  placeFile,
  sweepStaleTemps,
  syncDir,
  tempPathFor,
  writeFileAtomic,
} from '../../infra/atomic-write';

/** The app's own folders at the top level of every hot folder; the watcher ignores them. */
export const DONE_DIR = 'done';
export const FAILED_DIR = 'failed';

export type SourceMove = {
  /** The hot folder. */
  root: string;
  /** Absolute path of the source photo, inside `root`. */
  file: string;
};

/** Moves a processed source photo to `<root>/done/<subfolders>/`, never overwriting. */
export async function moveSourceToDone(move: SourceMove): Promise<string> {
  return moveNoClobber(move.file, mirroredTarget(move, DONE_DIR));
}

/**
 * Moves a source photo that could not be processed to `<root>/failed/<subfolders>/` and writes
 * `<file name>.reason.txt` next to it. The reason file keeps the full file name (`look.jpg.reason.txt`)
 * so `look.jpg` and `look.png` failing together do not share one.
 */
export async function moveSourceToFailed(
  move: SourceMove & { reason: string; now?: Date },
): Promise<{ path: string; reasonPath: string }> {
  const moved = await moveNoClobber(move.file, mirroredTarget(move, FAILED_DIR));
  const reasonPath = `${moved}.reason.txt`;
  const text = [
    move.reason.trim(),
    '',
    `File: ${path.relative(move.root, move.file)}`,
    `Failed at: ${(move.now ?? new Date()).toISOString()}`,
    '',
  ].join('\n');
  await writeFileAtomic(reasonPath, Buffer.from(text, 'utf8'), 'overwrite');
  return { path: moved, reasonPath };
}

/**
 * Moves a file to `target` (or `target-2`, `-3`... if taken) atomically: a hard link then unlink
 * on the same filesystem, which cannot replace an existing file. Across filesystems (a
 * subfolder that is a mount point) it copies to a hidden temp file, fsyncs, links it into place
 * and only then removes the source, so a crash never loses the photo.
 */
export async function moveNoClobber(source: string, target: string): Promise<string> {
  await fs.mkdir(path.dirname(target), { recursive: true });
  try {
    const placed = await placeFile(source, target, 'suffix');
    await syncDir(path.dirname(placed.path));
    return placed.path;
  } catch (error) {
    if (errorCode(error) !== 'EXDEV') throw error;
  }
  await sweepStaleTemps(path.dirname(target));
  const temp = tempPathFor(target);
  try {
    await fs.copyFile(source, temp, fs.constants.COPYFILE_EXCL);
    const handle = await fs.open(temp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    const placed = await placeFile(temp, target, 'suffix');
    await syncDir(path.dirname(placed.path));
    await fs.unlink(source);
    return placed.path;
  } finally {
    await discardTemp(temp);
  }
}

function mirroredTarget(move: SourceMove, dir: string): string {
  const root = path.resolve(move.root);
  const file = path.resolve(move.file);
  const relative = path.relative(root, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new Error(`${file} is not inside the hot folder ${root}`);
  }
  return path.join(root, dir, relative);
}
