/**
 * What the operator does to items in the queue (cancel, retry, export again, reprocess, move to
 * the front): which items each action applies to, and what it changes. The command handlers
 * only call these; every change is written before the engine is asked to go on.
 */
import path from 'node:path';
import { HELD_UNSENT, isReadyShootRecipe, type ItemState, type Recipe } from '../shared/studio';
import * as store from './db/store';
import { readFailedShots, readRecipeSnapshot } from './db/stored-json';
import type { StudioEngine } from './engine';
import { exportApprovedAgain, unexportableReason } from './export-step';
import type { HotFolders } from './folders';
import { MARKED_FAILED_UNCERTAIN, recipeColumns, recipeHash, retryItem } from './queue';
import { priceOfRecipes } from './recipe-estimate';
import { oneRequeueAtATime, requeuePhoto } from './requeue';
import { notOnItsWay } from './review-redo';
import { settleItem } from './review';
import { SOURCE_CHANGED } from './runner';

/** Items past these states hold a job at the service, or are on their way to one. */
const IN_FLIGHT: readonly ItemState[] = [
  'queued',
  'uploading',
  'submitting',
  'processing',
  'downloading',
];
/** Cancelling a job at the service would not refund it: only items not yet there can be cancelled. */
const CANCELLABLE: readonly ItemState[] = ['queued', 'uploading', 'review'];

/** The named items that exist and pass `keep`, in the order named. */
function itemsWhere(
  engine: StudioEngine,
  ids: readonly string[],
  keep: (item: store.ItemRow) => boolean,
): store.ItemRow[] {
  return ids
    .map((id) => store.getItem(engine.db, id))
    .filter((i): i is store.ItemRow => i !== undefined && keep(i));
}

const itemsIn = (engine: StudioEngine, ids: readonly string[], states: readonly ItemState[]) =>
  itemsWhere(engine, ids, (item) => states.includes(item.state));

/**
 * A photo held at `submitting` before any create that might be charged (a 402 for diamonds or the
 * plan, a gate): no create out (`submittedAt` cleared by the refusal), no job, no step under way.
 */
const heldUnsent = (engine: StudioEngine, item: store.ItemRow) =>
  item.state === 'submitting' &&
  item.waitReason !== null &&
  HELD_UNSENT.includes(item.waitReason) &&
  item.submittedAt === null &&
  item.jobId === null &&
  item.diamonds === 0 &&
  item.uncertain === 0 &&
  !engine.running.has(item.id);

/**
 * Cancels the photos of a folder no longer watched that are not paid for and not on their way to
 * the service: queued, uploading, or held unsent. Held ones (short of diamonds) stayed and were
 * paid for after a top-up (review rev34 M2). Results under way or made are kept.
 */
export function cancelUnsentOfFolder(engine: StudioEngine, folderId: string): string[] {
  const ids = engine.db
    .prepare(
      "SELECT id FROM items WHERE folder_id = ? AND state IN ('queued', 'uploading', 'submitting')",
    )
    .pluck()
    .all(folderId) as string[];
  const unsent = itemsWhere(
    engine,
    ids,
    (item) => item.state !== 'submitting' || heldUnsent(engine, item),
  ).map((i) => i.id);
  cancelItems(engine, unsent);
  return unsent;
}

export function cancelItems(engine: StudioEngine, ids: readonly string[]): number {
  const items = itemsWhere(
    engine,
    ids,
    (item) => CANCELLABLE.includes(item.state) || heldUnsent(engine, item),
  );
  for (const item of items)
    store.updateItem(engine.db, item.id, { state: 'cancelled', waitReason: null }, engine.now());
  items.forEach((i) => engine.emitItem(i.id));
  return items.length;
}

/**
 * Failed or cancelled items; and pack items past their job whose shots partly failed. Not a photo
 * whose file was replaced after it was queued: that version is gone, and sent again it would only
 * fail again (the new file is a photo of its own).
 */
function isRetryable(item: store.ItemRow): boolean {
  return (
    (item.state === 'failed' && item.error !== SOURCE_CHANGED) ||
    item.state === 'cancelled' ||
    (item.failedShots !== null && !IN_FLIGHT.includes(item.state))
  );
}

/**
 * What a retry does with an item: its failed shots alone as a new item (paid), the job already
 * paid for collected again (free), or the photo sent again (paid); null: nothing to retry.
 */
type RetryStep =
  | { kind: 'shots'; recipe: Recipe; shots: string[] }
  | { kind: 'collect' }
  /** `rewritten`: the recipe is the folder's, not the one it was queued with. */
  | { kind: 'resubmit'; recipe: Recipe; rewritten: boolean }
  /** Not sent: another item is this photo with that recipe, made or on its way. */
  | { kind: 'twin'; name: string; state: ItemState };

/**
 * The recipe a failed photo goes again with. One the service refused at its create (a 400: a model
 * id its catalog does not list, say) was never charged, and sent again as it was it is refused
 * again (review uirev A2): it takes its folder's current recipe, which the operator may have fixed
 * since. Any other keeps the recipe it was queued with.
 */
function retryRecipe(engine: StudioEngine, item: store.ItemRow): Recipe {
  const snapshot = readRecipeSnapshot(item.recipe);
  // Not one the operator gave up after an uncertain submission: that one may have been charged.
  const refusedUnpaid =
    item.state === 'failed' &&
    item.submitKey !== null &&
    item.uncertain === 0 &&
    item.error !== MARKED_FAILED_UNCERTAIN &&
    !store.isPaid(item);
  const folder = refusedUnpaid && item.folderId ? store.getFolder(engine.db, item.folderId) : null;
  return folder ? store.folderView(folder).recipe : snapshot;
}

function retryStep(engine: StudioEngine, item: store.ItemRow): RetryStep | null {
  if (!isRetryable(item)) return null;
  const recipe = retryRecipe(engine, item);
  const failedShots = readFailedShots(item.failedShots);
  if (failedShots.length && isReadyShootRecipe(recipe.request))
    return {
      kind: 'shots',
      recipe: { ...recipe, request: { ...recipe.request, shotIds: failedShots } },
      shots: failedShots,
    };
  if (item.state !== 'failed' && item.state !== 'cancelled') return null;
  // As retryItem decides: a job already paid for is collected again, never resubmitted.
  if (store.isPaid(item)) return { kind: 'collect' };
  // Taking the folder's recipe, the photo may meet itself: a copy dropped after the recipe's fix
  // is made (or on its way) with it already, and sending this one too would pay twice (rev24 R5).
  const rewritten = JSON.stringify(recipe) !== item.recipe;
  const twin = rewritten
    ? store.findEquivalent(engine.db, item.sha256, recipeHash(recipe))
    : undefined;
  if (twin && twin.id !== item.id) return { kind: 'twin', name: twin.name, state: twin.state };
  return { kind: 'resubmit', recipe, rewritten };
}

export async function retryItems(
  engine: StudioEngine,
  folders: HotFolders,
  ids: readonly string[],
): Promise<number> {
  const { db } = engine;
  let changed = 0;
  for (const item of itemsWhere(engine, ids, isRetryable)) {
    const step = retryStep(engine, item);
    if (!step) continue;
    if (step.kind === 'twin') {
      store.updateItem(
        db,
        item.id,
        {
          note: `not sent again: ${step.name} is this photo with the folder's recipe (${step.state})`,
        },
        engine.now(),
      );
      engine.emitItem(item.id);
      continue;
    }
    if (step.kind === 'resubmit' && step.rewritten)
      store.updateItem(db, item.id, recipeColumns(step.recipe), engine.now());
    if (step.kind === 'shots') {
      // Only the shots that failed go again, as a new item; this one keeps what succeeded.
      await requeuePhoto(engine, folders, item, step.recipe);
      store.updateItem(
        db,
        item.id,
        {
          failedShots: null,
          note: `${step.shots.length} failed shot(s) queued again as a new item`,
        },
        engine.now(),
      );
    } else {
      retryItem(db, item, await folders.restoreSource(item.id), engine.now());
    }
    engine.emitItem(item.id);
    changed++;
  }
  // A paid job the hidden-jobs gate held, taken up again: asked now, not at the gate's slow pace.
  if (changed) engine.gates.hiddenJobs.retried(engine.now().getTime());
  engine.kick();
  return changed;
}

/**
 * What retrying these items would charge, before anything is sent: photos (or failed shots) sent
 * again and their price at the scheduler's prices (null: not known), and photos whose job is
 * already paid and is only collected again, at no charge.
 */
export async function retryPrice(
  engine: StudioEngine,
  ids: readonly string[],
): Promise<{ charged: number; collected: number; diamonds: number | null }> {
  const steps = itemsWhere(engine, ids, isRetryable).flatMap((i) => retryStep(engine, i) ?? []);
  const paid = steps.flatMap((s) => (s.kind === 'collect' || s.kind === 'twin' ? [] : [s.recipe]));
  return {
    charged: paid.length,
    collected: steps.filter((s) => s.kind === 'collect').length,
    diamonds: await priceOfRecipes(engine, paid),
  };
}

/** The start of a note or error saying why Export again left a photo as it was. */
const NOT_EXPORTED_AGAIN = 'not exported again: ';

/** Exported items being written again now: a second press waits for nothing, it is skipped. */
const exportingAgain = new WeakMap<StudioEngine, Set<string>>();

/**
 * Results already paid for are written again with the folder's current export settings; nothing
 * is sent to the service. A failed export is written again; an exported photo too (its preset or
 * pattern changed since: review uirev B5, a paid Redo was the only way), its earlier files making
 * way for the new ones only once those are written (review rev29 D2: they were removed first,
 * and a write that then failed left the photo with no file). A photo whose paid result is gone
 * from the studio library is left as it is, with the reason; it is not counted.
 */
export async function exportAgain(
  engine: StudioEngine,
  folders: HotFolders,
  ids: readonly string[],
): Promise<number> {
  const { db } = engine;
  let changed = 0;
  for (const item of itemsIn(engine, ids, ['failed', 'exported'])) {
    const results = store.resultsOf(db, item.id);
    if (results.length === 0) continue;
    const folder = item.folderId ? store.getFolder(db, item.folderId) : undefined;
    // The folder's current export settings (a fixed naming pattern, say); the look stays the snapshot's.
    const recipe = folder
      ? { ...readRecipeSnapshot(item.recipe), export: store.folderView(folder).recipe.export }
      : undefined;
    if (item.state === 'exported') {
      if (!results.some((r) => r.review === 'approved' && r.exportedPath)) continue;
      if (await exportedAgain(engine, item, recipe ?? readRecipeSnapshot(item.recipe))) changed++;
      continue;
    }
    const unexportable = await unexportableReason(engine.library, results);
    if (unexportable) {
      store.updateItem(
        db,
        item.id,
        { error: `${NOT_EXPORTED_AGAIN}${unexportable}; Redo makes the photo again (paid)` },
        engine.now(),
      );
      engine.emitItem(item.id);
      continue;
    }
    const sourcePath = await folders.restoreSource(item.id);
    store.updateItem(
      db,
      item.id,
      {
        state: 'review',
        sourcePath,
        error: null,
        waitReason: null,
        waitUntil: null,
        ...(recipe ? { recipe: JSON.stringify(recipe) } : {}),
      },
      engine.now(),
    );
    engine.emitItem(item.id);
    settleItem(engine, item.id);
    changed++;
  }
  engine.kick();
  return changed;
}

/**
 * An exported item's approved results written again with `recipe`'s export settings, here and
 * now (the item stays exported throughout); whether they were. When they cannot be, its files and
 * records stay as they were and its note says why.
 */
async function exportedAgain(
  engine: StudioEngine,
  item: store.ItemRow,
  recipe: Recipe,
): Promise<boolean> {
  const busy = exportingAgain.get(engine) ?? new Set<string>();
  exportingAgain.set(engine, busy);
  if (busy.has(item.id)) return false;
  busy.add(item.id);
  try {
    const batch = store.getBatch(engine.db, item.batchId);
    await exportApprovedAgain({
      db: engine.db,
      library: engine.library,
      item,
      recipe,
      outputDir: batch?.outputDir ?? path.dirname(item.sourcePath),
      now: engine.now(),
      onResult: (row) => engine.events.emit('result.changed', store.resultView(row)),
    });
    store.updateItem(
      engine.db,
      item.id,
      {
        recipe: JSON.stringify(recipe),
        ...(item.note?.startsWith(NOT_EXPORTED_AGAIN) ? { note: null } : {}),
      },
      engine.now(),
    );
    return true;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    store.updateItem(
      engine.db,
      item.id,
      { note: `${NOT_EXPORTED_AGAIN}${reason}: the exported file was kept` },
      engine.now(),
    );
    return false;
  } finally {
    busy.delete(item.id);
    engine.emitItem(item.id);
  }
}

/**
 * The photos run again with the recipe they were queued with, as new items (paid again). A photo
 * whose item, or a requeue of it (redo, reprocess), is still on its way is not queued again: it
 * counts as `alreadyQueued`, as Redo answers (a second press would pay twice; review rev19 F3).
 */
export function reprocessItems(
  engine: StudioEngine,
  folders: HotFolders,
  ids: readonly string[],
): Promise<{ changed: number; alreadyQueued: number }> {
  return oneRequeueAtATime(engine, async () => {
    let changed = 0;
    let alreadyQueued = 0;
    for (const item of itemsWhere(engine, ids, () => true)) {
      // notOnItsWay reads the queue now: an earlier id of this press may have queued the photo.
      const next = IN_FLIGHT.includes(item.state)
        ? null
        : notOnItsWay(engine.db, item, readRecipeSnapshot(item.recipe));
      if (!next) {
        alreadyQueued++;
        continue;
      }
      await requeuePhoto(engine, folders, item, next);
      changed++;
    }
    return { changed, alreadyQueued };
  });
}

/** The items go before every other, in the order given. */
export function moveToFront(engine: StudioEngine, ids: readonly string[]): number {
  const first = store.firstPosition(engine.db);
  ids.forEach((id, i) =>
    store.updateItem(engine.db, id, { position: first - ids.length + i }, engine.now()),
  );
  ids.forEach((id) => engine.emitItem(id));
  engine.kick();
  return ids.length;
}

/** Items in review go to export (settled: approved results written, the rest declined). */
export function exportReviewed(
  engine: StudioEngine,
  ids: readonly string[] | undefined,
): { exported: number; failed: number } {
  const items = ids ? itemsIn(engine, ids, ['review']) : store.itemsInStates(engine.db, ['review']);
  let moved = 0;
  for (const item of items) {
    settleItem(engine, item.id);
    if (store.getItem(engine.db, item.id)?.state === 'exporting') moved++;
  }
  engine.kick();
  return { exported: moved, failed: items.length - moved };
}
