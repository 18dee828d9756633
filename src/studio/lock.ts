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

export function lockDataFolder(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(path.resolve(dataDir), 'studio.lock');
  const holders = held.get(file);
  if (
    holders !== undefined &&
    fs.existsSync(file) &&
    fs.readFileSync(file, 'utf8').trim() === String(process.pid)
  ) {
    held.set(file, holders + 1);
    return releaser(file);
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      held.set(file, 1);
      return releaser(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(file, 'utf8').trim());
      if (owner && owner !== process.pid && alive(owner)) {
        throw new DataFolderBusy(
          `the data folder ${dataDir} is in use by another Dropshoot process (pid ${owner}); let it finish or stop it, or give another --data folder`,
        );
      }
      fs.rmSync(file, { force: true }); // stale: its owner is gone
    }
  }
  throw new DataFolderBusy(`could not lock ${dataDir}`);
}
