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
