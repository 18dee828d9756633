/**
 * Redo from review: the result is declined at once (so "approve all" can never export it), and
 * its photo is queued again, with a new recipe or the one it had (a ready-shoot result redoes
 * only its own shot).
 */
import { isReadyShootRecipe, type Recipe } from '../shared/studio';
import * as store from './db/store';
import { readRecipeSnapshot } from './db/stored-json';
import type { StudioEngine } from './engine';
import type { HotFolders } from './folders';
import { requeuePhoto } from './requeue';
import { settleItem } from './review';

/** How many photos were queued again. `recipe` must have been checked by the caller. */
export async function redoResults(
  engine: StudioEngine,
  folders: HotFolders,
  resultIds: readonly string[],
  recipe?: Recipe,
): Promise<number> {
  const { db } = engine;
  let queued = 0;
  for (const id of resultIds) {
    const result = store.getResult(db, id);
    const item = result && store.getItem(db, result.itemId);
    if (!result || !item) continue;
    if (store.setReview(db, id, 'rejected'))
      engine.events.emit('result.changed', store.resultView(store.getResult(db, id)!));
    let next = recipe ?? readRecipeSnapshot(item.recipe);
    if (!recipe && result.shotId && isReadyShootRecipe(next.request)) {
      next = { ...next, request: { ...next.request, shotIds: [result.shotId] } };
    }
    await requeuePhoto(engine, folders, item, next);
    settleItem(engine, item.id);
    queued++;
  }
  return queued;
}
