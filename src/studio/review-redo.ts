/**
 * Redo from review: the results are declined at once (so "approve all" can never export them),
 * and each photo is queued again once, with a new recipe or the one it had. A redo asks for what
 * was selected and no more: results that name their shots (a ready shoot) ask only those shots;
 * results that cannot be asked one by one (no shot ids, or a tool whose one job makes them all)
 * give the photo's one job, never one per result. What is already queued or running for the
 * photo (the same recipe, or the same shots) is not asked again, and a result a later job of the
 * photo has already replaced (a stale press) asks nothing: each queued job is paid.
 */
import {
  isReadyShootRecipe,
  ITEM_STATES,
  RecipeSchema,
  type ItemState,
  type Recipe,
} from '../shared/studio';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import { readRecipeSnapshot } from './db/stored-json';
import type { StudioEngine } from './engine';
import type { HotFolders } from './folders';
import { recipeHash } from './queue';
import { priceOfRecipes } from './recipe-estimate';
import { oneRequeueAtATime, requeuePhoto } from './requeue';
import { settleItem } from './review';

export type RedoOutcome = {
  /** Photos queued again (one new job each). */
  queued: number;
  /** Photos whose redo was already queued or running, all of it: not queued again. */
  alreadyQueued: number;
  /** Photos whose selected results a later job of the photo already replaced: nothing queued. */
  alreadyRedone: number;
  /** What the queued jobs cost at the known prices (null: a price is not known). */
  diamonds: number | null;
};

/** What a redo would do, before anything is declined or paid (the Review screen's confirm). */
export type RedoPreview = RedoOutcome & {
  /** Photos whose one job makes again more than the results selected (a shoot or pack made whole). */
  whole: number;
};

/** Before its results exist: a redo here is still on its way. */
const ON_ITS_WAY: readonly ItemState[] = [
  'queued',
  'uploading',
  'submitting',
  'processing',
  'downloading',
];

/** One photo's part of a redo: its selected results, and the recipe to queue (null: none). */
type PhotoRedo = {
  item: store.ItemRow;
  results: store.ResultRow[];
  next: Recipe | null;
  why: 'queue' | 'alreadyQueued' | 'alreadyRedone';
  whole: boolean;
};

/** `recipe` must have been checked by the caller. */
export function redoResults(
  engine: StudioEngine,
  folders: HotFolders,
  resultIds: readonly string[],
  recipe?: Recipe,
): Promise<RedoOutcome> {
  // One at a time, reprocess included: two presses at once must not both find nothing on its way.
  return oneRequeueAtATime(engine, () => redoOnce(engine, folders, resultIds, recipe));
}

/**
 * What `redoResults` would queue and cost now; nothing is written. `askPrices`: the service is
 * asked for prices not known yet (else they answer null).
 */
export async function previewRedo(
  engine: StudioEngine,
  resultIds: readonly string[],
  recipe?: Recipe,
  askPrices = true,
): Promise<RedoPreview> {
  const plan = planRedo(engine.db, resultIds, recipe);
  return {
    ...(await outcomeOf(engine, plan, askPrices)),
    whole: plan.filter((p) => p.why === 'queue' && p.whole).length,
  };
}

async function redoOnce(
  engine: StudioEngine,
  folders: HotFolders,
  resultIds: readonly string[],
  recipe?: Recipe,
): Promise<RedoOutcome> {
  const { db } = engine;
  const plan = planRedo(db, resultIds, recipe);
  for (const { item, results, next } of plan) {
    for (const result of results)
      if (store.setReview(db, result.id, 'rejected'))
        engine.events.emit('result.changed', store.resultView(store.getResult(db, result.id)!));
    if (next) await requeuePhoto(engine, folders, item, next);
    settleItem(engine, item.id);
  }
  // Priced after queueing: a service slow to list its prices delays the answer, not the redo.
  return outcomeOf(engine, plan);
}

async function outcomeOf(
  engine: StudioEngine,
  plan: readonly PhotoRedo[],
  askPrices = true,
): Promise<RedoOutcome> {
  const queued = plan.flatMap((p) => (p.next ? [p.next] : []));
  return {
    queued: queued.length,
    alreadyQueued: plan.filter((p) => p.why === 'alreadyQueued').length,
    alreadyRedone: plan.filter((p) => p.why === 'alreadyRedone').length,
    diamonds: await priceOfRecipes(engine, queued, askPrices),
  };
}

/** Each photo's part of the redo of these results, in the order first named. */
function planRedo(db: StudioDB, resultIds: readonly string[], recipe?: Recipe): PhotoRedo[] {
  const byItem = new Map<string, store.ResultRow[]>();
  for (const id of new Set(resultIds)) {
    const result = store.getResult(db, id);
    if (!result) continue;
    byItem.set(result.itemId, [...(byItem.get(result.itemId) ?? []), result]);
  }
  const plan: PhotoRedo[] = [];
  for (const [itemId, results] of byItem) {
    const item = store.getItem(db, itemId);
    if (!item) continue;
    const sameFile = otherJobsOfFile(db, item);
    const current = results.filter((r) => !replacedLater(db, item, sameFile, r));
    if (!current.length) {
      plan.push({ item, results, next: null, why: 'alreadyRedone', whole: false });
      continue;
    }
    const wanted = recipe ?? sameRecipeFor(readRecipeSnapshot(item.recipe), current);
    const next = notOnItsWay(db, item, wanted);
    plan.push({
      item,
      results,
      next,
      why: next ? 'queue' : 'alreadyQueued',
      whole: !!next && !shotsOf(next) && store.resultsOf(db, item.id).length > current.length,
    });
  }
  return plan;
}

/**
 * The same photo's items in the same batch and folder, but this one: a redo's new item is one of
 * them; the same photo from another folder or run exports elsewhere, its redo is not this one's.
 * Looked up by the photo (indexed), not by scanning the queue: a price is asked at every focus.
 */
function samePhoto(db: StudioDB, item: store.ItemRow, states: readonly ItemState[]) {
  const ids = db
    .prepare('SELECT id FROM items WHERE sha256 = ? AND batch_id = ? AND id != ?')
    .pluck()
    .all(item.sha256, item.batchId, item.id) as string[];
  return ids
    .map((id) => store.getItem(db, id))
    .filter(
      (i): i is store.ItemRow =>
        i !== undefined && i.folderId === item.folderId && states.includes(i.state),
    );
}

/** The same file's other items (a copy of it under another name is a photo of its own). */
const otherJobsOfFile = (db: StudioDB, item: store.ItemRow) =>
  samePhoto(db, item, ITEM_STATES).filter(
    (i) => i.relativeDir === item.relativeDir && i.name === item.name,
  );

/**
 * A later job of the file (in `sameFile`) delivered this result again (its shot, or, where shots
 * are not named, all of what its job made): it is no longer the photo's current result, and
 * redoing it would pay for what is already there.
 */
function replacedLater(
  db: StudioDB,
  item: store.ItemRow,
  sameFile: readonly store.ItemRow[],
  result: store.ResultRow,
): boolean {
  const asked = shotsOf(readRecipeSnapshot(item.recipe));
  return sameFile.some((later) => {
    const made = store.resultsOf(db, later.id).filter((r) => r.createdAt > result.createdAt);
    if (!made.length) return false;
    if (result.shotId !== null && made.some((r) => r.shotId === result.shotId)) return true;
    if (made.some((r) => r.shotId !== null)) return false;
    // Results that name no shot: the later job replaces it if it asked every shot this one did.
    const laterAsked = shotsOf(readRecipeSnapshot(later.recipe));
    if (laterAsked === null) return true;
    const these = result.shotId !== null ? [result.shotId] : asked;
    return these !== null && these.every((s) => laterAsked.includes(s));
  });
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
export function notOnItsWay(db: StudioDB, item: store.ItemRow, recipe: Recipe): Recipe | null {
  const pending = samePhoto(db, item, ON_ITS_WAY);
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
