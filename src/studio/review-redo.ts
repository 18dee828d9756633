/**
 * Redo from review: the results are declined at once (so "approve all" can never export them),
 * and each photo is queued again once, with a new recipe or the one it had. A redo asks for what
 * was selected and no more: results that name their shots (a ready shoot) ask only those shots;
 * results that cannot be asked one by one (no shot ids, or a tool whose one job makes them all)
 * give the photo's one job, never one per result. What is already queued or running for the
 * photo (the same recipe, or the same shots) is not asked again: each queued job is paid.
 */
import { isReadyShootRecipe, RecipeSchema, type ItemState, type Recipe } from '../shared/studio';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import { readRecipeSnapshot } from './db/stored-json';
import type { StudioEngine } from './engine';
import type { HotFolders } from './folders';
import { recipeHash } from './queue';
import { requeuePhoto } from './requeue';
import { settleItem } from './review';

export type RedoOutcome = {
  /** Photos queued again (one new job each). */
  queued: number;
  /** Photos whose redo was already queued or running, all of it: not queued again. */
  alreadyQueued: number;
  /** What the queued jobs cost at the known prices (null: a price is not known). */
  diamonds: number | null;
};

/** Before its results exist: a redo here is still on its way. */
const ON_ITS_WAY: readonly ItemState[] = [
  'queued',
  'uploading',
  'submitting',
  'processing',
  'downloading',
];

// One redo at a time per studio: two presses at once must not both find nothing on its way.
const inFlight = new WeakMap<StudioEngine, Promise<unknown>>();

/** `recipe` must have been checked by the caller. */
export function redoResults(
  engine: StudioEngine,
  folders: HotFolders,
  resultIds: readonly string[],
  recipe?: Recipe,
): Promise<RedoOutcome> {
  const previous = inFlight.get(engine) ?? Promise.resolve();
  const next = previous
    .catch(() => undefined)
    .then(() => redoOnce(engine, folders, resultIds, recipe));
  inFlight.set(engine, next);
  return next;
}

async function redoOnce(
  engine: StudioEngine,
  folders: HotFolders,
  resultIds: readonly string[],
  recipe?: Recipe,
): Promise<RedoOutcome> {
  const { db } = engine;
  const byItem = new Map<string, store.ResultRow[]>();
  for (const id of new Set(resultIds)) {
    const result = store.getResult(db, id);
    if (!result) continue;
    byItem.set(result.itemId, [...(byItem.get(result.itemId) ?? []), result]);
  }
  const outcome: RedoOutcome = { queued: 0, alreadyQueued: 0, diamonds: 0 };
  const queued: Recipe[] = [];
  for (const [itemId, results] of byItem) {
    const item = store.getItem(db, itemId);
    if (!item) continue;
    for (const result of results)
      if (store.setReview(db, result.id, 'rejected'))
        engine.events.emit('result.changed', store.resultView(store.getResult(db, result.id)!));
    const next = notOnItsWay(
      db,
      item,
      recipe ?? sameRecipeFor(readRecipeSnapshot(item.recipe), results),
    );
    if (!next) {
      outcome.alreadyQueued++;
    } else {
      await requeuePhoto(engine, folders, item, next);
      queued.push(next);
    }
    settleItem(engine, item.id);
  }
  outcome.queued = queued.length;
  // Priced after queueing: a service slow to list its prices delays the answer, not the redo.
  if (queued.length) await engine.spending.loadPrices().catch(() => undefined);
  for (const next of queued) {
    const price = engine.spending.pricesKnown ? engine.spending.quote(next) : null;
    outcome.diamonds =
      price && outcome.diamonds !== null ? outcome.diamonds + price.diamonds : null;
  }
  return outcome;
}

/**
 * The photo's own recipe, narrowed to the selected shots when every selected result names its
 * shot (in the order the shoot made them); otherwise whole: its results cannot be asked alone.
 */
function sameRecipeFor(recipe: Recipe, results: readonly store.ResultRow[]): Recipe {
  const shots = [...results].sort((a, b) => a.n - b.n).map((r) => r.shotId);
  if (!isReadyShootRecipe(recipe.request) || shots.some((s) => s === null)) return recipe;
  return withShots(recipe, [...new Set(shots as string[])]);
}

/** The shots a ready-shoot recipe asks (null: all its set's, or not a ready shoot). */
const shotsOf = (recipe: Recipe): readonly string[] | null =>
  isReadyShootRecipe(recipe.request) && recipe.request.shotIds?.length
    ? recipe.request.shotIds
    : null;

const withShots = (recipe: Recipe, shotIds: readonly string[] | undefined): Recipe =>
  isReadyShootRecipe(recipe.request)
    ? { ...recipe, request: { ...recipe.request, shotIds: shotIds && [...shotIds] } }
    : recipe;

/** As the queue hashes it (defaults filled), to compare with an item's stored recipe hash. */
const hashOf = (recipe: Recipe): string => recipeHash(RecipeSchema.parse(recipe));

/**
 * What of `recipe` is not already on its way for this photo (null: nothing): another item of the
 * same photo in the same batch and folder, not delivered yet, asks the same recipe, or, for named
 * shots, some of them already.
 */
function notOnItsWay(db: StudioDB, item: store.ItemRow, recipe: Recipe): Recipe | null {
  const pending = store.itemsInStates(db, ON_ITS_WAY).filter(
    (i) =>
      i.id !== item.id &&
      i.sha256 === item.sha256 &&
      // The same photo from another folder or run exports elsewhere: its redo is not this one's.
      i.batchId === item.batchId &&
      i.folderId === item.folderId,
  );
  if (pending.some((i) => i.recipeHash === hashOf(recipe))) return null;
  const shots = shotsOf(recipe);
  if (!shots) return recipe;
  const sameShoot = hashOf(withShots(recipe, undefined));
  const asked = pending
    .map((i) => readRecipeSnapshot(i.recipe))
    .filter((r) => hashOf(withShots(r, undefined)) === sameShoot)
    .map(shotsOf);
  if (asked.includes(null)) return null;
  const left = shots.filter((s) => !asked.some((a) => a!.includes(s)));
  if (!left.length) return null;
  return left.length === shots.length ? recipe : withShots(recipe, left);
}
