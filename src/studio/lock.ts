/**
 * One engine per data folder: two processes driving the same queue would upload, submit and
 * export the same photos twice. A lock file holds the owner's pid; a lock left by a process that
 * no longer runs (a crash, a kill -9) is taken over. Within one process the lock is re-entrant:
 * the CLI takes it before it opens anything (the embedded core resumes its jobs as it opens), and
 * the engine it then starts takes it again; the file goes when the last holder lets go.
 */
import fs from 'node:fs';
import path from 'node:path';

export class DataFolderBusy extends Error {
  override name = 'DataFolderBusy';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Lock files this process holds, with how many holders each. */
const held = new Map<string, number>();

function releaser(file: string): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const holders = (held.get(file) ?? 1) - 1;
    if (holders > 0) {
      held.set(file, holders);
      return;
    }
    held.delete(file);
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid))
        fs.rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

/** The pid a lock file names: 0 when it holds no pid, null when there is no file. */
function ownerOf(file: string): number | null {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim()) || 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Creates a file holding our pid in one step: the content is written to a file of our own and
 * linked in, so no contender ever reads it empty (and takes it for a stale lock).
 */
function createExclusive(file: string): boolean {
  const mine = `${file}.${process.pid}`;
  fs.writeFileSync(mine, String(process.pid));
  try {
    fs.linkSync(mine, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    fs.rmSync(mine, { force: true });
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** A lock names a live process other than this one. */
function heldByAnother(owner: number | null): boolean {
  return !!owner && owner !== process.pid && alive(owner);
}

/**
 * Removes a lock whose owner has ended. Only the process holding the clearing guard removes, and
 * it reads the owner again under the guard: two processes that both saw the stale lock cannot
 * both clear it, nor clear the fresh lock one of them took meanwhile.
 */
function clearStale(file: string): void {
  const guard = `${file}.clearing`;
  if (createExclusive(guard)) {
    try {
      const owner = ownerOf(file);
      // no file: another cleared it, and a fresh lock may appear any moment; leave it be
      if (owner !== null && !heldByAnother(owner)) fs.rmSync(file, { force: true });
    } finally {
      fs.rmSync(guard, { force: true });
    }
    return;
  }
  const clearer = ownerOf(guard);
  if (clearer === null || heldByAnother(clearer)) {
    pause(2); // another process is clearing: look again
    return;
  }
  // A guard left by a process that died while clearing: set it aside, unless a live one took its place.
  const aside = `${guard}.${process.pid}`;
  try {
    fs.renameSync(guard, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    if (heldByAnother(ownerOf(aside))) fs.linkSync(aside, guard);
  } catch (err) {
    // Another clearer's guard is in place already: it clears; we look again.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

export function lockDataFolder(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(path.resolve(dataDir), 'studio.lock');
  const holders = held.get(file);
  if (holders !== undefined && ownerOf(file) === process.pid) {
    held.set(file, holders + 1);
    return releaser(file);
  }
  for (let attempt = 0; attempt < 200; attempt++) {
    if (createExclusive(file)) {
      held.set(file, 1);
      return releaser(file);
    }
    const owner = ownerOf(file);
    if (heldByAnother(owner)) {
      throw new DataFolderBusy(
        `the data folder ${dataDir} is in use by another Dropshoot process (pid ${owner}); let it finish or stop it, or give another --data folder`,
      );
    }
    clearStale(file);
  }
  throw new DataFolderBusy(`could not lock ${dataDir}`);
}
