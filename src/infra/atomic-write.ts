/**
 * The one atomic-write helper: temp file in the target's folder + fsync + rename/link, with a
 * conflict policy. Used by the export (no-clobber names) and the studio library (overwrite), so
 * both leave at worst a hidden temp after a crash, and both clean such temps after a restart.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/** What to do when the target name exists. Never silent: `overwrite` must be chosen explicitly. */
export const ConflictPolicySchema = z.enum(['suffix', 'skip', 'overwrite']).default('suffix');
export type ConflictPolicy = z.infer<typeof ConflictPolicySchema>;

export type PlaceStatus = 'written' | 'skipped' | 'overwritten';
export type PlaceResult = { status: PlaceStatus; path: string };

const MAX_SUFFIX = 10_000;

/** `dir/look.jpg` -> `dir/look-2.jpg` for n = 2. */
export function suffixedPath(target: string, n: number): string {
  if (n <= 1) return target;
  const ext = path.extname(target);
  return `${target.slice(0, target.length - ext.length)}-${n}${ext}`;
}

/**
 * A hidden `.tmp` name in the target's folder: same filesystem, so the final rename is atomic,
 * and ignored by hot folders and by the export folder's own listings.
 */
export function tempPathFor(target: string): string {
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  tempsInFlight.add(temp);
  return temp;
}

/** Temp files this process is writing right now: the sweep must never take them. */
const tempsInFlight = new Set<string>();
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;
const sweptDirs = new Set<string>();

/** Removes a temp file and forgets it. */
export async function discardTemp(temp: string): Promise<void> {
  await fs.rm(temp, { force: true });
  tempsInFlight.delete(temp);
}

/**
 * A crash (power loss, SIGKILL) between writing a temp file and renaming it leaves the hidden
 * temp behind. The first write into a folder after start removes such leftovers, once per folder
 * per process, sparing the temps this process has in flight. `alsoStale` names other leftovers
 * to take (temp names an older build used).
 */
export async function sweepStaleTemps(dir: string, alsoStale?: RegExp): Promise<void> {
  const key = path.resolve(dir);
  if (sweptDirs.has(key)) return;
  sweptDirs.add(key);
  let names: string[];
  try {
    names = await fs.readdir(key);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return;
    throw error;
  }
  for (const name of names) {
    const full = path.join(key, name);
    const stale = TEMP_NAME.test(name) || (alsoStale?.test(name) ?? false);
    if (stale && !tempsInFlight.has(full)) await fs.rm(full, { force: true });
  }
}

/**
 * Writes `data` to `target` atomically (temp file + fsync + rename/link), honouring the conflict
 * policy. A crash leaves either the previous state or the complete file, plus at worst a hidden
 * `.tmp` file, never a half-written export under the real name. `mode` is the new file's
 * permissions (under the umask), set on the temp file before any byte is written.
 */
export async function writeFileAtomic(
  target: string,
  data: Uint8Array | string,
  conflict: ConflictPolicy = 'suffix',
  options: { mode?: number } = {},
): Promise<PlaceResult> {
  await fs.mkdir(path.dirname(target), { recursive: true });
  await sweepStaleTemps(path.dirname(target));
  if (conflict === 'skip' && (await exists(target))) return { status: 'skipped', path: target };
  const temp = tempPathFor(target);
  try {
    const handle = await fs.open(temp, 'wx', options.mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const placed = await placeFile(temp, target, conflict);
    await syncDir(path.dirname(placed.path));
    return placed;
  } finally {
    await discardTemp(temp);
  }
}

/**
 * Moves a complete file (same filesystem) to `target` under the policy. With `suffix` and `skip`
 * it never replaces an existing file, even one created concurrently: it uses link(), which fails
 * with EEXIST, instead of rename(), which silently replaces. The source is left for the caller
 * to remove when it was linked.
 */
export async function placeFile(
  source: string,
  target: string,
  conflict: ConflictPolicy,
): Promise<PlaceResult> {
  if (conflict === 'overwrite') {
    const existed = await exists(target);
    await fs.rename(source, target);
    return { status: existed ? 'overwritten' : 'written', path: target };
  }
  const last = conflict === 'skip' ? 1 : MAX_SUFFIX;
  for (let n = 1; n <= last; n++) {
    const candidate = suffixedPath(target, n);
    try {
      await fs.link(source, candidate);
      await fs.rm(source, { force: true });
      return { status: 'written', path: candidate };
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST') continue;
      if (!LINK_UNSUPPORTED.has(code)) throw error;
      // FAT/exFAT and some SMB shares have no hard links: check-then-rename (a narrow race).
      if (await exists(candidate)) continue;
      await fs.rename(source, candidate);
      return { status: 'written', path: candidate };
    }
  }
  if (conflict === 'skip') return { status: 'skipped', path: target };
  throw new Error(`No free name for ${target} after ${MAX_SUFFIX} attempts`);
}

const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EINVAL', 'EMLINK']);

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
}

export function errorCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : '';
}

/** Persists the rename itself; best effort, since directories cannot be opened on Windows. */
export async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not supported on this platform/filesystem; the data itself was already fsynced.
  } finally {
    await handle?.close();
  }
}
