/**
 * Review decisions and what follows from them: an item whose results are all decided moves on
 * (to export when one is approved, to `rejected` when none is: a decision, not a failure), and a
 * decision taken back un-exports what was written for it. Every change is announced, so the
 * review grid and the board stay true to the store.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReviewState } from '../shared/studio';
import * as store from './db/store';
import type { StudioEngine } from './engine';
import type { HotFolders } from './folders';

/** How long a decision taken back waits for an export already writing that item. */
const EXPORT_SETTLE_MS = 15_000;

export async function setReviews(
  engine: StudioEngine,
  folders: HotFolders,
  ids: string[],
  review: ReviewState,
): Promise<{ changed: number; unexported: number }> {
  const db = engine.db;
  let changed = 0;
  const touched = new Set<string>();
  for (const id of ids) {
    const row = store.getResult(db, id);
    if (!row) continue;
    touched.add(row.itemId);
    if (store.setReview(db, id, review)) {
      changed++;
      engine.events.emit('result.changed', store.resultView(store.getResult(db, id)!));
    }
  }
  let unexported = 0;
  for (const itemId of touched) {
    if (review !== 'approved') unexported += await unexportDeclined(engine, folders, itemId);
    await reconsider(engine, folders, itemId);
    settleItem(engine, itemId);
  }
  engine.kick();
  return { changed, unexported };
}

/**
 * Removes the exported files of an item's results that are no longer approved, after any export
 * in flight for it has finished; the item goes back to review and its source back in place.
 */
async function unexportDeclined(
  engine: StudioEngine,
  folders: HotFolders,
  itemId: string,
): Promise<number> {
  const db = engine.db;
  const deadline = Date.now() + EXPORT_SETTLE_MS;
  while (store.getItem(db, itemId)?.state === 'exporting' && Date.now() < deadline)
    await sleep(100);
  const declined = store
    .resultsOf(db, itemId)
    .filter((r) => r.exportedPath && r.review !== 'approved');
  for (const result of declined) await unexportResult(engine, result);
  return declined.length;
}

/** Removes the file written for a result and forgets it was exported, announcing the change. */
async function unexportResult(
  engine: StudioEngine,
  result: { id: string; exportedPath: string | null },
): Promise<void> {
  if (result.exportedPath) await fs.promises.rm(result.exportedPath, { force: true });
  store.setExported(engine.db, result.id, null, null);
  engine.events.emit('result.changed', store.resultView(store.getResult(engine.db, result.id)!));
}

/**
 * A finished item whose decisions changed: back to review when something is undecided or
 * approved but not written (its source back from done/ or failed/), or `rejected` when its
 * last exported file was taken back.
 */
async function reconsider(
  engine: StudioEngine,
  folders: HotFolders,
  itemId: string,
): Promise<void> {
  const db = engine.db;
  const item = store.getItem(db, itemId);
  if (!item || (item.state !== 'exported' && item.state !== 'rejected')) return;
  const results = store.resultsOf(db, itemId);
  if (results.length === 0) return; // a file that was never a photo
  const pending = results.some((r) => r.review === 'pending');
  const unwritten = results.some((r) => r.review === 'approved' && !r.exportedPath);
  if (pending || unwritten) {
    const sourcePath = await folders.restoreSource(itemId);
    store.updateItem(
      db,
      itemId,
      {
        state: 'review',
        sourcePath,
        error: null,
        note: pending ? 'decision taken back: its files were removed' : null,
      },
      engine.now(),
    );
    engine.emitItem(itemId);
  } else if (item.state === 'exported' && !results.some((r) => r.exportedPath)) {
    store.updateItem(
      db,
      itemId,
      { state: 'rejected', note: 'every result was declined in review; its files were removed' },
      engine.now(),
    );
    engine.emitItem(itemId);
  }
}

/** An item in review whose results are all decided moves on. */
export function settleItem(engine: StudioEngine, itemId: string): void {
  const db = engine.db;
  const item = store.getItem(db, itemId);
  if (!item || item.state !== 'review') return;
  const results = store.resultsOf(db, itemId);
  if (results.length === 0 || results.some((r) => r.review === 'pending')) return;
  if (results.some((r) => r.review === 'approved')) {
    store.updateItem(db, itemId, { state: 'exporting' }, engine.now());
  } else {
    store.updateItem(
      db,
      itemId,
      {
        state: 'rejected',
        error: null,
        note: 'every result was declined in review; nothing exported',
      },
      engine.now(),
    );
  }
  engine.emitItem(itemId);
}
