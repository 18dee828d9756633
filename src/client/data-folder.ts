/**
 * One data-folder layout for every command that embeds the service core (`run`, `studio`,
 * `generate`, the desktop app): `<data>/studio.db`, `<data>/library/` and the core in
 * `<data>/core/` (`core.db`, `blobs/`, `providers.json`). Older `generate` wrote its core straight
 * into `<data>/`; such a folder is moved into place once, never forked into a second ledger.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The core's own files as the older layout left them at the top of the data folder. */
const LEGACY_CORE_ENTRIES = [
  'core.db',
  'core.db-wal',
  'core.db-shm',
  'blobs',
  'providers.json',
] as const;

export class DataFolderLayoutError extends Error {
  override name = 'DataFolderLayoutError';
}

export function coreDirOf(dataDir: string): string {
  return path.join(dataDir, 'core');
}

/**
 * Returns `<data>/core`, first moving a core written by the older layout (`<data>/core.db`) into
 * it. The move goes through `<data>/core.migrating/` and ends with one rename, so a crash part-way
 * is finished on the next start. Call with the data folder locked.
 */
export function embeddedCoreDir(dataDir: string): string {
  const coreDir = coreDirOf(dataDir);
  const staging = path.join(dataDir, 'core.migrating');
  const legacyDb = path.join(dataDir, 'core.db');
  const hasLegacy = fs.existsSync(legacyDb);
  const hasStaging = fs.existsSync(staging);
  if (!hasLegacy && !hasStaging) return coreDir;
  if (fs.existsSync(coreDir)) {
    throw new DataFolderLayoutError(
      `${dataDir} holds two service cores, ${legacyDb} (written by an older \`generate\`) and ${path.join(coreDir, 'core.db')}; keep one: move core.db, core.db-wal, core.db-shm and blobs/ out of ${dataDir} to keep ${coreDir}, or move ${coreDir} away to keep the older one, then run again`,
    );
  }
  fs.mkdirSync(staging, { recursive: true });
  for (const entry of LEGACY_CORE_ENTRIES) {
    const from = path.join(dataDir, entry);
    if (fs.existsSync(from)) fs.renameSync(from, path.join(staging, entry));
  }
  fs.renameSync(staging, coreDir);
  return coreDir;
}
