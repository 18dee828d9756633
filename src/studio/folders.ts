/**
 * Hot folders: each watched folder has its own recipe, output folder and batch. Stable photos
 * are queued with a snapshot of the folder's recipe; when an item is finished its source moves
 * to `done/` (or `failed/` with a reason file).
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FolderView, ItemView, Recipe } from '../shared/studio';
import { recipeKind, requestToolId, TERMINAL_STATES } from '../shared/studio';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import type { StudioEngine } from './engine';
import { moveNoClobber, moveSourceToDone, moveSourceToFailed } from './export/source-files';
import { isInside, realLocation } from './folder-paths';
import { requeueStranded } from './queue';
import { cancelUnsentOfFolder } from './queue-actions';
import { SOURCE_CHANGED } from './runner';
import { watchHotFolder, type HotFileRejection, type HotFolderWatch } from './watch/hot-folder';

/** A folder the studio will not watch (nested, duplicate, missing); the message is for the operator. */
export class FolderRefused extends Error {}

/** How often the folders are looked for, to tell the UI when one goes or comes back. */
const PRESENCE_CHECK_MS = 2_000;

export type HotFoldersOptions = { settleMs?: number; log?: (message: string) => void };

export class HotFolders {
  private readonly watches = new Map<string, HotFolderWatch>();
  /** Source moves in flight, by item: a restore waits for the move it would otherwise miss. */
  private readonly moving = new Map<string, Promise<void>>();
  /** Sources being moved back by restoreSource, until their records follow. */
  private readonly restoring = new Set<Promise<unknown>>();
  /** Whether each folder was there at the last look, to tell the UI when one goes or comes back. */
  private readonly present = new Map<string, boolean>();
  private presenceTimer: NodeJS.Timeout | undefined;
  /** Each item's charge as last seen (spent, maybe charged), to tell the UI its folder's spend moved. */
  private readonly chargeSeen = new Map<string, string>();

  constructor(
    private readonly engine: StudioEngine,
    private readonly opts: HotFoldersOptions = {},
  ) {
    engine.events.on('item.changed', (item) => {
      this.noteCharge(item);
      this.onItemChanged(item);
    });
  }

  /**
   * A photo charged (or its charge become uncertain or settled): the folders' views carry their
   * batches' spend, and the card showed it stale beside its own photos' sum (review uirev C3: "32
   * diamonds spent" and "0 spent"). Its folder and its batch's folder are told, not every folder:
   * each view sums its batch's whole history (review rev29 D5: 87 ms a charge at 50,000 items).
   */
  private noteCharge(item: ItemView): void {
    const charge = `${item.diamonds}|${item.uncertain}|${item.maybeCharged === true}`;
    const before = this.chargeSeen.get(item.id);
    this.chargeSeen.set(item.id, charge);
    if (charge === (before ?? '0|false|false')) return;
    const { db } = this.engine;
    const told = new Set([item.folderId, store.getBatch(db, item.batchId)?.folderId]);
    for (const id of told) {
      const row = id ? store.getFolder(db, id) : undefined;
      if (row) this.engine.events.emit('folder.changed', store.folderViewOf(db, row));
    }
  }

  /** Starts watching every stored folder (existing files are picked up). */
  async start(): Promise<void> {
    for (const folder of store.listFolders(this.engine.db)) await this.watch(folder.id);
    this.presenceTimer ??= setInterval(() => this.notePresence(), PRESENCE_CHECK_MS);
    this.presenceTimer.unref();
    // Sources of items that finished while the app was closed.
    for (const item of store.itemsInStates(this.engine.db, TERMINAL_STATES))
      this.onItemChanged(store.itemView(item));
  }

  async stop(): Promise<void> {
    clearInterval(this.presenceTimer);
    this.presenceTimer = undefined;
    await Promise.all([...this.watches.values()].map((w) => w.close()));
    this.watches.clear();
  }

  async add(input: {
    path: string;
    outputDir: string;
    recipe: Recipe;
    maxDiamonds?: number | null;
  }): Promise<FolderView> {
    if (!fs.existsSync(input.path) || !fs.statSync(input.path).isDirectory())
      throw new FolderRefused(`${input.path} is not a folder on this computer.`);
    const db = this.engine.db;
    const real = realLocation(input.path);
    const outputDir = path.resolve(input.outputDir);
    this.refuseOverlap(real, realLocation(outputDir));
    const id = `folder_${randomUUID()}`;
    db.prepare(
      'INSERT INTO folders (id, path, output_dir, recipe, created_at) VALUES (?, ?, ?, ?, ?)',
    ).run(id, real, outputDir, JSON.stringify(input.recipe), this.engine.now().toISOString());
    this.engine.createBatch({
      kind: 'folder',
      outputDir,
      folderId: id,
      ceiling: input.maxDiamonds ?? null,
    });
    await this.watch(id);
    return this.view(id);
  }

  /**
   * One photo must belong to one hot folder: a folder inside another (or the same one reached by
   * a symlink or a relative path) would have its photos taken, and charged, twice. An output
   * folder inside a hot folder would feed exports back in as new photos.
   */
  private refuseOverlap(real: string, output: string): void {
    for (const other of store.listFolders(this.engine.db)) {
      const existing = realLocation(other.path);
      if (existing === real)
        throw new FolderRefused(
          `${real} is already a hot folder${other.path !== real ? ` (as ${other.path})` : ''}.`,
        );
      if (isInside(real, existing))
        throw new FolderRefused(
          `${real} is inside the hot folder ${existing}, which already takes its photos. Use a folder outside it, or stop watching ${existing} first.`,
        );
      if (isInside(existing, real))
        throw new FolderRefused(
          `${real} contains the hot folder ${existing}: its photos would be taken twice. Stop watching ${existing} first, or pick another folder.`,
        );
      if (output === existing || isInside(output, existing))
        throw new FolderRefused(
          `The output folder ${output} is inside the hot folder ${existing}: exported files would come back as new photos.`,
        );
    }
    if (output === real || isInside(output, real))
      throw new FolderRefused(
        `The output folder ${output} is inside the folder to watch: exported files would come back as new photos. Pick a folder next to it.`,
      );
    // The other way round: exports already there (or written there later) would be taken as new
    // photos and paid for again, 4 diamonds an export on a 4-diamond recipe.
    const onExports = onExportsProblem(this.engine.db, real);
    if (onExports) throw new FolderRefused(onExports);
  }

  async remove(id: string): Promise<void> {
    await this.watches.get(id)?.close();
    this.watches.delete(id);
    this.present.delete(id);
    const db = this.engine.db;
    // Photos not paid for nor on their way are cancelled; the others keep their history.
    const cancelled = cancelUnsentOfFolder(this.engine, id);
    db.transaction(() => {
      db.prepare('UPDATE items SET folder_id = NULL WHERE folder_id = ?').run(id);
      db.prepare('UPDATE batches SET folder_id = NULL WHERE folder_id = ?').run(id);
      db.prepare('DELETE FROM folders WHERE id = ?').run(id);
    }).immediate();
    for (const item of cancelled) this.engine.emitItem(item);
  }

  /** New photos use the new recipe; queued items keep the snapshot they were queued with. */
  setRecipe(id: string, recipe: Recipe): FolderView {
    this.engine.db
      .prepare('UPDATE folders SET recipe = ? WHERE id = ?')
      .run(JSON.stringify(recipe), id);
    const view = this.view(id);
    this.engine.events.emit('folder.changed', view);
    return view;
  }

  setPaused(id: string, paused: boolean): FolderView {
    this.engine.db.prepare('UPDATE folders SET paused = ? WHERE id = ?').run(paused ? 1 : 0, id);
    if (!paused) {
      this.engine.clearWaits('paused', { folderId: id });
      this.engine.kick();
    }
    const view = this.view(id);
    this.engine.events.emit('folder.changed', view);
    return view;
  }

  /** Photos of this folder stop being started before its batch would spend more than this. */
  setCeiling(id: string, maxDiamonds: number | null): FolderView {
    const current = this.view(id);
    this.engine.setCeiling(this.batchOf(id, current.outputDir), maxDiamonds);
    const view = this.view(id);
    this.engine.events.emit('folder.changed', view);
    return view;
  }

  /**
   * The source photo of an item about to be worked on again (retry, reprocess, redo): moved back
   * from done/ or failed/ to where it was dropped (suffixed if that name is taken meanwhile).
   * Returns the path to use; the item's record follows the file.
   */
  async restoreSource(itemId: string): Promise<string> {
    const restoring = this.restoreSourceNow(itemId);
    this.restoring.add(restoring);
    try {
      return await restoring;
    } finally {
      this.restoring.delete(restoring);
    }
  }

  private async restoreSourceNow(itemId: string): Promise<string> {
    await this.moving.get(itemId);
    const db = this.engine.db;
    const row = db
      .prepare(
        'SELECT source_path AS sourcePath, sha256, moved_to AS movedTo FROM items WHERE id = ?',
      )
      .get(itemId) as { sourcePath: string; sha256: string; movedTo: string | null } | undefined;
    if (!row) throw new Error(`no item ${itemId}`);
    if (fs.existsSync(row.sourcePath)) return row.sourcePath;
    // Moved under this item, or under another item of the same file (a redo's item that was
    // exported moves the file its first item was queued from).
    const holder = [
      { id: itemId, movedTo: row.movedTo },
      ...(db
        .prepare(
          'SELECT id, moved_to AS movedTo FROM items WHERE source_path = ? AND sha256 = ? AND id != ? AND moved_to IS NOT NULL ORDER BY created_at DESC',
        )
        .all(row.sourcePath, row.sha256, itemId) as { id: string; movedTo: string }[]),
    ].find((h) => h.movedTo !== null && fs.existsSync(h.movedTo));
    if (!holder?.movedTo) return row.sourcePath;
    const restored = await moveNoClobber(holder.movedTo, row.sourcePath);
    await fs.promises.rm(`${holder.movedTo}.reason.txt`, { force: true });
    db.transaction(() => {
      db.prepare('UPDATE items SET moved_to = NULL WHERE id = ?').run(holder.id);
      db.prepare('UPDATE items SET source_path = ?, moved_to = NULL WHERE id = ?').run(
        restored,
        itemId,
      );
    })();
    return restored;
  }

  private view(id: string): FolderView {
    const row = store.getFolder(this.engine.db, id);
    if (!row) throw new Error(`no hot folder ${id}`);
    return store.folderViewOf(this.engine.db, row);
  }

  private batchOf(folderId: string, outputDir: string): string {
    return (
      store.folderBatch(this.engine.db, folderId)?.id ??
      this.engine.createBatch({ kind: 'folder', outputDir, folderId })
    );
  }

  private async watch(id: string): Promise<void> {
    const folder = store.getFolder(this.engine.db, id);
    if (!folder || this.watches.has(id)) return;
    this.present.set(id, fs.existsSync(folder.path));
    const watch = watchHotFolder({
      root: folder.path,
      ...(this.opts.settleMs !== undefined ? { settleMs: this.opts.settleMs } : {}),
      onFile: async (file) => {
        // A restore moves a file back before its record says so: wait for the record.
        await Promise.allSettled([...this.restoring]);
        const current = store.getFolder(this.engine.db, id);
        if (!current) return;
        if (this.takeStrandedAgain(file.path, file.sha256, current)) return;
        // Not queued twice: a file at this path with this content that is still on its way or in
        // review, exported already, or not moved out by the studio (its move to done/ or failed/
        // under way or failed, or put back by a retry). A file the studio had moved out and the
        // operator put back is a new drop, with the folder's current recipe: enqueue's
        // same-photo-same-recipe check collects what was paid for instead of paying again.
        const held = this.engine.db
          .prepare(
            `SELECT 1 FROM items WHERE source_path = ? AND sha256 = ? AND folder_id = ?
               AND (state NOT IN (${TERMINAL_STATES.map(() => '?').join(',')}) OR state = 'exported' OR moved_to IS NULL)`,
          )
          .get(file.path, file.sha256, id, ...TERMINAL_STATES);
        if (held) return;
        this.engine.enqueue({
          batchId: this.batchOf(id, current.outputDir),
          folderId: id,
          sourcePath: file.path,
          rootDir: current.path,
          sha256: file.sha256,
          recipe: store.folderView(current).recipe,
        });
      },
      onReject: (rejection) => this.reject(id, rejection),
      onError: (err) =>
        this.opts.log?.(
          `hot folder ${folder.path}: ${err instanceof Error ? err.message : String(err)}`,
        ),
    });
    this.watches.set(id, watch);
    await watch.ready;
  }

  /** A folder gone or back since the last look is shown as such (review uirev B6: it was not). */
  private notePresence(): void {
    for (const row of store.listFolders(this.engine.db)) {
      // A stat every look; the view (its batch's sums) only for a folder gone or back.
      const present = fs.existsSync(row.path);
      const before = this.present.get(row.id);
      this.present.set(row.id, present);
      if (before === undefined || before === present) continue;
      this.opts.log?.(`hot folder ${row.path}: ${present ? 'back' : 'not found'}`);
      this.engine.events.emit('folder.changed', store.folderViewOf(this.engine.db, row));
    }
  }

  /**
   * A photo that failed because its file was not there when it was to be sent (its hot folder
   * away: a share that dropped, a folder moved by mistake), never sent and never moved: with its
   * file back it is taken again as the same row, as a new drop (review uirev B6). Whether there
   * was one.
   */
  private takeStrandedAgain(sourcePath: string, sha256: string, folder: store.FolderRow): boolean {
    const db = this.engine.db;
    const stranded = db
      .prepare(
        `SELECT id FROM items WHERE source_path = ? AND sha256 = ? AND folder_id = ? AND state = 'failed'
           AND submit_key IS NULL AND job_id IS NULL AND moved_to IS NULL AND error LIKE 'ENOENT%'`,
      )
      .get(sourcePath, sha256, folder.id) as { id: string } | undefined;
    const item = stranded && store.getItem(db, stranded.id);
    if (!item) return false;
    requeueStranded(db, item, store.folderView(folder).recipe, sourcePath, this.engine.now());
    this.engine.emitItem(item.id);
    this.engine.kick();
    return true;
  }

  /**
   * A file that is not a usable photo: recorded as a rejected item (nothing is sent or spent), so
   * the board says why, and moved to failed/ with a reason file like any other photo that failed.
   */
  private reject(folderId: string, rejection: HotFileRejection): void {
    const folder = store.getFolder(this.engine.db, folderId);
    if (!folder || !fs.existsSync(rejection.path)) return;
    let sha256: string;
    try {
      sha256 = createHash('sha256').update(fs.readFileSync(rejection.path)).digest('hex');
    } catch {
      return; // gone meanwhile
    }
    const db = this.engine.db;
    if (
      db
        .prepare(
          "SELECT 1 FROM items WHERE source_path = ? AND sha256 = ? AND state = 'rejected' AND moved_to IS NULL",
        )
        .get(rejection.path, sha256)
    )
      return;
    const id = `item_${randomUUID()}`;
    const recipe = store.folderView(folder).recipe;
    const now = this.engine.now().toISOString();
    store.insertItem(db, {
      id,
      batchId: this.batchOf(folderId, folder.outputDir),
      folderId,
      sourcePath: rejection.path,
      rootDir: folder.path,
      relativeDir: rejection.relativeDir,
      name: rejection.name,
      sha256,
      recipe: JSON.stringify(recipe),
      recipeHash: '', // no recipe runs on it: the view's badFile
      kind: recipeKind(recipe.request),
      toolId: requestToolId(recipe.request),
      state: 'rejected',
      waitReason: null,
      error: rejection.reason,
      note: null,
      createdAt: now,
    });
    this.engine.emitItem(id);
  }

  private onItemChanged(item: ItemView): void {
    if (!item.folderId || !TERMINAL_STATES.includes(item.state) || this.moving.has(item.id)) return;
    // The file under that name is a newer photo, queued on its own: it stays where it is.
    if (item.state === 'failed' && item.error === SOURCE_CHANGED) return;
    const folder = store.getFolder(this.engine.db, item.folderId);
    if (!folder || !fs.existsSync(item.sourcePath)) return;
    // Another item still working on the same file (a redo) keeps it in place.
    const busy = this.engine.db
      .prepare(
        `SELECT 1 FROM items WHERE source_path = ? AND id != ? AND state NOT IN (${TERMINAL_STATES.map(() => '?').join(',')})`,
      )
      .get(item.sourcePath, item.id, ...TERMINAL_STATES);
    if (busy) return;
    const move =
      item.state === 'exported' || item.state === 'skipped'
        ? moveSourceToDone({ root: folder.path, file: item.sourcePath })
        : moveSourceToFailed({
            root: folder.path,
            file: item.sourcePath,
            reason: item.error ?? item.note ?? item.state,
            now: this.engine.now(),
          }).then((moved) => moved.path);
    const done = move
      .then((movedTo) => {
        this.engine.db.prepare('UPDATE items SET moved_to = ? WHERE id = ?').run(movedTo, item.id);
      })
      .catch((err: unknown) =>
        this.opts.log?.(
          `could not move ${item.sourcePath}: ${err instanceof Error ? err.message : String(err)}`,
        ),
      )
      .finally(() => this.moving.delete(item.id));
    this.moving.set(item.id, done);
  }
}

/** Every folder the studio exports to, real locations: hot folders' and earlier runs'. */
function knownOutputFolders(db: StudioDB): { output: string; of: string }[] {
  const rows = db
    .prepare(
      `SELECT DISTINCT b.output_dir AS outputDir, b.kind, f.path AS folderPath
         FROM batches b LEFT JOIN folders f ON f.id = b.folder_id
       UNION
       SELECT output_dir, 'folder', path FROM folders`,
    )
    .all() as { outputDir: string; kind: 'run' | 'folder'; folderPath: string | null }[];
  return rows.map((row) => ({
    output: realLocation(row.outputDir),
    of:
      row.folderPath !== null
        ? `the hot folder ${row.folderPath}`
        : row.kind === 'run'
          ? 'an earlier run'
          : 'a hot folder no longer watched',
  }));
}

/**
 * Why photos under `dir` (a real location) would be exports the studio made: it is, lies inside
 * or contains an output folder this data folder exported to (`run --in` checks it too).
 */
export function onExportsProblem(db: StudioDB, dir: string): string | null {
  for (const known of knownOutputFolders(db)) {
    if (dir === known.output || isInside(dir, known.output))
      return `${dir} is ${dir === known.output ? '' : 'inside '}the output folder ${known.output} of ${known.of}: its exported files would be taken as new photos and paid for again. Pick a folder outside it.`;
    if (isInside(known.output, dir))
      return `${dir} contains the output folder ${known.output} of ${known.of}: its exported files would be taken as new photos and paid for again. Pick another folder.`;
  }
  return null;
}
