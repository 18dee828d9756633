/**
 * The durable queue: items with a snapshot of their recipe, deduplicated by photo and recipe, and
 * the one rule that keeps a photo from being paid twice: once it has a job the service charged
 * (and did not report `failed`), it is never submitted again for the same recipe. A retry, a
 * re-run or a duplicate goes back to collecting what was paid for: poll, download, export.
 */
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { recipeKind, RecipeSchema, requestToolId, type Recipe } from '../shared/studio';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import {
  isPartialNote,
  PARTIAL_GIVEN_UP,
  partialGivenUpNote,
  resultsMissing,
  takePartialPoll,
} from './result-download';

/** Stable hash of a recipe, for "same photo + same recipe already done". */
export function recipeHash(recipe: Recipe): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, v]) => [k, canonical(v)]),
          )
        : value;
  return createHash('sha256')
    .update(JSON.stringify(canonical(recipe)))
    .digest('hex');
}

/** An item's columns that follow its recipe: the snapshot, its hash, its kind and tool. */
export function recipeColumns(recipe: Recipe) {
  return {
    recipe: JSON.stringify(recipe),
    recipeHash: recipeHash(recipe),
    kind: recipeKind(recipe.request),
    toolId: requestToolId(recipe.request),
  };
}

/** The note of a photo not sent because `twin` is this photo with this recipe. */
const sameAsNote = (twin: store.ItemRow): string =>
  `same photo and recipe already ${twinState(twin)} as ${twin.name} (${twin.id}); nothing spent`;

/**
 * Where a paid item goes back to, to deliver what was paid for: poll the job if its results are
 * not known, download what is missing, then review or export.
 */
export function collectState(
  db: StudioDB,
  item: store.ItemRow,
  autoApprove: boolean,
): store.ItemPatch {
  const urls = item.resultUrls ? (JSON.parse(item.resultUrls) as string[]) : null;
  const base: store.ItemPatch = {
    error: null,
    waitReason: null,
    waitUntil: null,
    attempts: 0,
    uncertain: 0,
    reserved: 0,
  };
  // Not polled yet, or collected `partial` (the job owes more results): the same job is polled.
  if (!urls || resultsMissing(item) > 0) return { ...base, state: 'processing', pollAt: null };
  const results = store.resultsOf(db, item.id);
  if (results.length < urls.length) return { ...base, state: 'downloading' };
  if (results.some((r) => r.review === 'pending') && !autoApprove)
    return { ...base, state: 'review' };
  return { ...base, state: 'exporting' };
}

/**
 * SET clause for an item another batch takes over: a charge already on it stays the batch's that
 * paid it (SQLite reads `batch_id` before the update), the first payer kept.
 */
const PAID_BY_OLD_BATCH =
  'paid_batch_id = COALESCE(paid_batch_id, CASE WHEN diamonds > 0 THEN batch_id END)';

export type EnqueueInput = {
  batchId: string;
  folderId?: string | null;
  sourcePath: string;
  rootDir: string;
  sha256: string;
  recipe: Recipe;
  reprocess?: boolean;
};

/**
 * Queues one photo with a snapshot of its recipe, in one transaction. Returns the id of the item
 * that now stands for the photo: a new one, or an earlier one adopted (an interrupted `run`'s, or
 * any whose job was paid for and not delivered).
 */
export function enqueue(
  db: StudioDB,
  input: EnqueueInput,
  now: Date,
): { id: string; adopted: boolean } {
  const recipe = RecipeSchema.parse(input.recipe);
  const columns = recipeColumns(recipe);
  const rel = path.relative(input.rootDir, path.dirname(input.sourcePath));
  const id = `item_${randomUUID()}`;
  return db
    .transaction((): { id: string; adopted: boolean } => {
      const twin = input.reprocess
        ? undefined
        : store.findEquivalent(db, input.sha256, columns.recipeHash);
      const batch = store.getBatch(db, input.batchId);
      const twinBatch = twin && store.getBatch(db, twin.batchId);
      // Exported `partial` (fewer results than its job owes, by this version or an earlier one):
      // its job is asked once per run for the rest while it may still be kept (`takePartialPoll`);
      // after that the note names the shots paid and never listed, and the photo stays exported.
      const missing = twin?.state === 'exported' ? resultsMissing(twin) : 0;
      const partialPoll = twin && missing > 0 ? takePartialPoll(db, twin, now) : null;
      if (
        twin &&
        partialPoll &&
        !partialPoll.ok &&
        partialPoll.final &&
        !PARTIAL_GIVEN_UP.test(twin.note ?? '')
      )
        store.updateItem(
          db,
          twin.id,
          { note: partialGivenUpNote(twin, missing, partialPoll.why) },
          now,
        );
      if (twin && (twin.state === 'failed' || partialPoll?.ok)) {
        // Paid for and not delivered (export failed, outage...): collect it, do not pay again.
        // Its charge stays the paying batch's (its spend and ceiling), not this one's.
        db.prepare(
          `UPDATE items SET ${PAID_BY_OLD_BATCH}, batch_id = ?, source_path = ? WHERE id = ?`,
        ).run(input.batchId, input.sourcePath, twin.id);
        store.updateItem(
          db,
          twin.id,
          {
            ...collectState(db, twin, batch?.autoApprove === 1),
            note: partialPoll?.ok
              ? `${twin.note ?? 'partial'}; asking the same job once more for the rest`
              : 'already paid for in an earlier attempt: collecting that job, not submitting again',
          },
          now,
        );
        return { id: twin.id, adopted: true };
      }
      if (
        twin &&
        twin.state !== 'exported' &&
        twin.state !== 'rejected' &&
        twin.state !== 'cancelled' &&
        twinBatch?.kind === 'run' &&
        batch?.kind === 'run'
      ) {
        // A `run` interrupted earlier: this batch takes the unfinished item over instead of
        // queueing the photo again (its journal says how far it got).
        db.prepare(
          `UPDATE items SET ${PAID_BY_OLD_BATCH}, batch_id = ?, wait_reason = NULL, wait_until = NULL WHERE id = ?`,
        ).run(input.batchId, twin.id);
        return { id: twin.id, adopted: true };
      }
      store.insertItem(db, {
        id,
        batchId: input.batchId,
        folderId: input.folderId ?? null,
        sourcePath: input.sourcePath,
        rootDir: input.rootDir,
        relativeDir: rel === '' ? '' : rel.split(path.sep).join('/'),
        name: path.basename(input.sourcePath),
        sha256: input.sha256,
        ...columns,
        state: twin ? 'skipped' : 'queued',
        waitReason: null,
        note: twin ? sameAsNote(store.getItem(db, twin.id) ?? twin) : null,
        createdAt: now.toISOString(),
      });
      return { id, adopted: false };
    })
    .immediate();
}

/**
 * A photo that failed because its file was away when it was to be sent (never sent), its file
 * back: taken again as the same row with its folder's current recipe, as a new drop would be, or
 * skipped when the photo with that recipe is made or on its way (a copy dropped into another
 * folder meanwhile: review rev26, paid twice when the row was simply sent again).
 */
export function requeueStranded(
  db: StudioDB,
  item: store.ItemRow,
  recipe: Recipe,
  sourcePath: string,
  now: Date,
): void {
  const patch = recipeColumns(recipe);
  db.transaction(() => {
    const twin = store.findEquivalent(db, item.sha256, patch.recipeHash);
    if (twin && twin.id !== item.id) {
      store.updateItem(db, item.id, { state: 'skipped', error: null, note: sameAsNote(twin) }, now);
      return;
    }
    store.updateItem(db, item.id, patch, now);
    retryItem(db, { ...item, ...patch }, sourcePath, now);
  }).immediate();
}

/** How far the earlier item for the same photo and recipe got, for the skipped one's note. */
function twinState(twin: store.ItemRow): string {
  switch (twin.state) {
    case 'exported':
      return isPartialNote(twin.note) ? `exported (${twin.note})` : 'exported';
    case 'review':
      return 'generated and waiting for review';
    case 'rejected':
      // Paid for and turned down by a person: only a deliberate Redo pays for it again.
      return 'generated and rejected in review (use Redo to generate it again)';
    case 'cancelled':
      // Paid for, then cancelled: Retry collects that job again for nothing.
      return 'generated and cancelled (use Retry to collect it, Redo to generate it again)';
    case 'failed':
      return 'paid for and not delivered (use Generate again on it to collect it)';
    default:
      return 'queued';
  }
}

/**
 * `queue.retry` for one failed or cancelled item: a paid job is collected again (re-poll,
 * re-download, re-export); only an item with no job, or whose job the service itself reported
 * failed (refunded), starts over from the upload.
 */
export function retryItem(db: StudioDB, item: store.ItemRow, sourcePath: string, now: Date): void {
  const batch = store.getBatch(db, item.batchId);
  if (store.isPaid(item)) {
    store.updateItem(
      db,
      item.id,
      {
        ...collectState(db, item, batch?.autoApprove === 1),
        sourcePath,
        note: 'retrying what was paid for: collecting the same job',
      },
      now,
    );
    return;
  }
  store.updateItem(
    db,
    item.id,
    {
      sourcePath,
      state: 'queued',
      error: null,
      waitReason: null,
      waitUntil: null,
      attempts: 0,
      uploadKey: null,
      uploadUrl: null,
      submitKey: null,
      submitRequest: null,
      submittedAt: null,
      jobId: null,
      jobStatus: null,
      resultUrls: null,
      shotMap: null,
      uncertain: 0,
      pollAt: null,
      seenRunningAt: null,
      reserved: 0,
      priceSure: 0,
      resubmits: 0,
      diamonds: 0,
    },
    now,
  );
  // Sent again, its next charge is its own batch's (the refunded one counted nowhere).
  db.prepare('UPDATE items SET paid_batch_id = NULL WHERE id = ?').run(item.id);
}

/**
 * Sends under a new key a photo may have after a create whose answer was lost: one, so it costs
 * twice at most, ever ("may cost twice"). Review rev17 U1: a resubmit whose answer was lost too
 * was resubmitted again each time the batch settled, paying every time.
 */
export const UNCERTAIN_RESUBMITS_MAX = 1;

/**
 * Diamonds a batch's lost creates may have taken that no reservation or charge of its photos
 * holds any more: each create sent again under a new key since (`uncertain_resubmits`) at its
 * plan (`planOf`). Counted, like its charges, for the photos sent in this batch (or not sent since).
 */
export function lostBeforeResubmit(
  db: StudioDB,
  batchId: string,
  planOf: (item: store.ItemRow) => number,
): number {
  const ids = db
    .prepare(
      `SELECT id FROM items WHERE batch_id = ? AND uncertain_resubmits > 0
         AND (submitted_at IS NULL OR submitted_at >= (SELECT created_at FROM batches WHERE id = ?))`,
    )
    .pluck()
    .all(batchId, batchId) as string[];
  let diamonds = 0;
  for (const id of ids) {
    const item = store.getItem(db, id);
    if (item) diamonds += item.uncertainResubmits * planOf(item);
  }
  return diamonds;
}

/**
 * An uncertain submission (its answer was lost and the service does not confirm Idempotency-Key)
 * settled by the operator: `resubmit` sends it again under a new key (it may cost the price a
 * second time if the first one was charged), once at most (`UNCERTAIN_RESUBMITS_MAX`); `fail`
 * gives the photo up.
 */
/** The error of a photo the operator marked failed after an uncertain submission. */
export const MARKED_FAILED_UNCERTAIN =
  'marked failed by the operator after an uncertain submission (it may have been charged once)';

export function resolveUncertain(
  db: StudioDB,
  item: store.ItemRow,
  action: 'resubmit' | 'fail',
  now: Date,
): boolean {
  if (item.uncertain !== 1) return false;
  if (action === 'resubmit') {
    if (item.uncertainResubmits >= UNCERTAIN_RESUBMITS_MAX) return false;
    store.updateItem(
      db,
      item.id,
      {
        uncertain: 0,
        waitReason: null,
        submittedAt: null,
        submitKey: `submit-${item.id}-${randomUUID()}`,
        uncertainResubmits: item.uncertainResubmits + 1,
        note: `${item.note ?? 'uncertain submission'}; resubmitted by the operator`,
      },
      now,
    );
  } else {
    store.updateItem(
      db,
      item.id,
      {
        uncertain: 0,
        waitReason: null,
        state: 'failed',
        reserved: 0,
        error: MARKED_FAILED_UNCERTAIN,
      },
      now,
    );
  }
  return true;
}
