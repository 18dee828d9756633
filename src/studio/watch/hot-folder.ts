import path from 'node:path';
import { watch } from 'chokidar';
import pLimit from 'p-limit';
import { filesUnder } from './files-under';
import { isIgnored } from './ignore';
import type { SourceFormat } from './sniff';
import { checkStableFile, DEFAULT_SETTLE_MS } from './stable-file';

/** A photo ready for the queue: complete, decodable, hashed. */
export type HotFile = {
  path: string;
  /** Subfolder relative to the hot folder, `/`-separated, `''` at the top level. */
  relativeDir: string;
  name: string;
  sha256: string;
  format: SourceFormat;
  size: number;
};

export type HotFileRejection = { path: string; relativeDir: string; name: string; reason: string };

export type WatchHotFolderOptions = {
  root: string;
  /** How long a file must stay unchanged before it is read; default 2 s. */
  settleMs?: number;
  /** Files read, hashed and decoded at once; bounds memory and open handles. Default 4. */
  concurrency?: number;
  /** Poll instead of OS events: for SMB/NFS shares, which often send no change events. */
  usePolling?: boolean;
  /** How often the folder is walked for files its events missed; default 5 settles, at least 5 s. */
  rescanMs?: number;
  onFile: (file: HotFile) => void | Promise<void>;
  onError: (error: Error) => void;
  /** A stable file that is not a complete image (yet); it is re-checked when it changes. */
  onReject?: (rejection: HotFileRejection) => void;
};

export type HotFolderWatch = {
  /** Resolves when the initial scan is done: every existing file is being checked (not yet delivered). */
  ready: Promise<void>;
  /** Stops watching and waits for checks in flight; no callback runs after it resolves. */
  close: () => Promise<void>;
};

type PathState = {
  checking: boolean;
  /** A change arrived while checking: check again afterwards. */
  dirty: boolean;
  /** Content hash last delivered for this path: the same content is never delivered twice. */
  delivered: string | null;
  /** Size and mtime of the last rejection, so a still-broken file is reported once. */
  rejected: string | null;
};

/**
 * Settle-and-decode rounds for a file that is stable but incomplete, each a settle longer: a copy
 * stalled that long (about a minute at the default 2 s) is rejected and moved to failed/, where
 * a copy still going on would finish it unseen. A broken file is reported that much later.
 */
const STALLED_COPY_RETRIES = 6;

/**
 * Watches a hot folder recursively and delivers each photo once it is complete. Existing files
 * are picked up at start. Each path is delivered once per content while the file stays: replacing
 * it with different bytes delivers it again, touching it does not. A file that leaves the path and
 * comes back (moved out to failed/ and put back by the operator) is delivered again: the caller
 * decides whether it is a new drop.
 */
export function watchHotFolder(options: WatchHotFolderOptions): HotFolderWatch {
  const root = path.resolve(options.root);
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const limit = pLimit(options.concurrency ?? 4);
  const abort = new AbortController();
  const states = new Map<string, PathState>();
  const inFlight = new Set<Promise<void>>();

  const watcher = watch(root, {
    ignoreInitial: false,
    // Our own stability check replaces awaitWriteFinish: size alone cannot spot a truncated file.
    awaitWriteFinish: false,
    // A file moved out and straight back must read as gone and back (see 'unlink' below), not be
    // folded into a 'change' of the same bytes.
    atomic: false,
    followSymlinks: false,
    ignorePermissionErrors: true,
    usePolling: options.usePolling ?? false,
    interval: Math.max(100, Math.min(1_000, Math.round(settleMs / 2))),
    ignored: (p: string) => isIgnored(path.relative(root, p)),
  });

  const describe = (file: string): { relativeDir: string; name: string } => {
    const relative = path.relative(root, file);
    const dir = path.dirname(relative);
    return {
      relativeDir: dir === '.' ? '' : dir.split(path.sep).join('/'),
      name: path.basename(file),
    };
  };

  const check = async (file: string, state: PathState): Promise<void> => {
    state.checking = true;
    try {
      do {
        state.dirty = false;
        const result = await checkStableFile(file, {
          settleMs,
          decodeRetries: STALLED_COPY_RETRIES,
          signal: abort.signal,
          limit,
        });
        if (abort.signal.aborted) return;
        if (state.dirty) continue; // changed after we looked: look again
        switch (result.kind) {
          case 'gone':
            break;
          case 'rejected': {
            const key = `${result.size}:${result.mtimeMs}`;
            if (state.rejected !== key) {
              state.rejected = key;
              options.onReject?.({ path: file, ...describe(file), reason: result.reason });
            }
            break;
          }
          case 'ready': {
            state.rejected = null;
            if (state.delivered === result.file.sha256) break;
            state.delivered = result.file.sha256;
            const { sha256, format, size } = result.file;
            await options.onFile({ path: file, ...describe(file), sha256, format, size });
            break;
          }
        }
      } while (state.dirty && !abort.signal.aborted);
    } catch (error) {
      if (!abort.signal.aborted) options.onError(toError(error));
    } finally {
      state.checking = false;
    }
  };

  const schedule = (file: string): void => {
    if (abort.signal.aborted) return;
    let state = states.get(file);
    if (!state) {
      state = { checking: false, dirty: false, delivered: null, rejected: null };
      states.set(file, state);
    }
    if (state.checking) {
      state.dirty = true;
      return;
    }
    const running = check(file, state);
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
  };

  watcher.on('add', schedule);
  watcher.on('change', schedule);
  // Gone from the path: whatever comes back there later is looked at afresh.
  watcher.on('unlink', (file: string) => {
    const state = states.get(file);
    if (!state) return;
    if (!state.checking) {
      states.delete(file);
      return;
    }
    state.delivered = null;
    state.rejected = null;
    state.dirty = true;
  });
  watcher.on('error', (error) => {
    if (!abort.signal.aborted) options.onError(toError(error));
  });

  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));

  // OS events can be missed (a folder dropped in while its watch is being set up, the inotify
  // watch limit reached): a walk now and then checks every file no event has named.
  let rescanning = false;
  const rescan = async (): Promise<void> => {
    if (rescanning || abort.signal.aborted) return;
    rescanning = true;
    try {
      for await (const file of filesUnder(root, { followSymlinks: false })) {
        if (abort.signal.aborted) break;
        if (!states.has(file)) schedule(file);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The hot folder itself gone is the watcher's to report.
      if (!abort.signal.aborted && code !== 'ENOENT') options.onError(toError(error));
    } finally {
      rescanning = false;
    }
  };
  const rescanTimer = setInterval(
    () => void rescan(),
    options.rescanMs ?? Math.max(5_000, settleMs * 5),
  );
  rescanTimer.unref();

  return {
    ready,
    close: async () => {
      abort.abort();
      clearInterval(rescanTimer);
      await watcher.close();
      await Promise.allSettled([...inFlight]);
    },
  };
}

const toError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));
