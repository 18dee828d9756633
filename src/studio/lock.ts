/**
 * One engine per data folder: two processes driving the same queue would upload, submit and
 * export the same photos twice. A lock file holds the owner's pid; a lock left by a process that
 * no longer runs (a crash, a kill -9) is taken over.
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

export function lockDataFolder(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'studio.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => {
        if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(file, 'utf8').trim());
      if (owner && owner !== process.pid && alive(owner)) {
        throw new DataFolderBusy(`${dataDir} is in use by another Dropshoot studio (pid ${owner}); close it first`);
      }
      fs.rmSync(file, { force: true }); // stale: its owner is gone
    }
  }
  throw new DataFolderBusy(`could not lock ${dataDir}`);
}
