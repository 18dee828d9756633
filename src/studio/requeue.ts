/**
 * A queue item's photo goes round again as a new item (paid again), with the recipe given: the
 * one step that retry of failed shots, reprocess and redo from review share.
 */
import type { Recipe } from '../shared/studio';
import type { ItemRow } from './db/store';
import type { StudioEngine } from './engine';
import type { HotFolders } from './folders';

export async function requeuePhoto(
  engine: StudioEngine,
  folders: HotFolders,
  item: ItemRow,
  recipe: Recipe,
): Promise<void> {
  // The photo may have been moved to done/ or failed/: it goes back where it was dropped first.
  const sourcePath = await folders.restoreSource(item.id);
  engine.enqueue({
    batchId: item.batchId,
    folderId: item.folderId,
    sourcePath,
    rootDir: item.rootDir,
    sha256: item.sha256,
    recipe,
    reprocess: true,
  });
}

// One requeue (redo, reprocess) at a time per studio: two presses at once must not both find
// nothing on its way and both pay.
const requeueing = new WeakMap<StudioEngine, Promise<unknown>>();

/** Runs `step` after every requeue step already started on this studio has ended. */
export function oneRequeueAtATime<T>(engine: StudioEngine, step: () => Promise<T>): Promise<T> {
  const previous = requeueing.get(engine) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(step);
  requeueing.set(engine, next);
  return next;
}
