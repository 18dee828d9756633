/**
 * Queries over the studio database: thin, no business rules, no mapping to the contract's views
 * (views.ts) and no reading of stored JSON (stored-json.ts). Every state change is one
 * statement or one transaction, written before the network call it guards.
 */
import type { StudioDB } from './open';
import type {
  ComplianceReport,
  ItemState,
  RecipeKind,
  ReviewState,
  WaitReason,
} from '../../shared/studio';

export type ItemRow = {
  id: string;
  batchId: string;
  folderId: string | null;
  sourcePath: string;
  rootDir: string;
  relativeDir: string;
  name: string;
  sha256: string;
  recipe: string;
  recipeHash: string;
  kind: RecipeKind;
  /** A tool id, never a kind (null for a ready shoot and a look naming no tool). */
  toolId: string | null;
  state: ItemState;
  waitReason: WaitReason | null;
  waitUntil: string | null;
  error: string | null;
  note: string | null;
  uncertain: number;
  attempts: number;
  position: number;
  uploadKey: string | null;
  uploadUrl: string | null;
  submitKey: string | null;
  submitRequest: string | null;
  jobId: string | null;
  /** JSON: result URLs in order, recorded when the job completed (remote URLs may expire). */
  resultUrls: string | null;
  /** JSON: shot id per result URL, for ready shoots. */
  shotMap: string | null;
  /** JSON: ids of the shots that failed in a ready shoot (retried alone, as a new item). */
  failedShots: string | null;
  price: number;
  diamonds: number;
  packTotal: number | null;
  packCompleted: number | null;
  packFailed: number | null;
  submittedAt: string | null;
  /** When the current submitKey first went out (a resend keeps it; a new key clears it). */
  keySentAt: string | null;
  /** What the service last said of the job; only its own `failed` means the charge was refunded. */
  jobStatus: string | null;
  /** When the job is next due for a poll (it holds no slot until then). */
  pollAt: string | null;
  /** The last poll that saw the job still running (for the job-time estimate). */
  seenRunningAt: string | null;
  /** When the service first listed the result URLs stored (a file may not be readable at once). */
  resultsListedAt: string | null;
  /** JSON: every result URL the job's answers listed, first seen first (running answers too). */
  listedUrls: string | null;
  /** Diamonds held for this item against its batch's ceiling until it is charged. */
  reserved: number;
  /** 1 when `diamonds` is the confirmed charge (from the service or the balance). */
  priceSure: number;
  /** Submissions sent again after the service answered 500 (refunded). */
  resubmits: number;
  /** Sends under a new key after a create whose answer was lost (each may have been charged again). */
  uncertainResubmits: number;
  createdAt: string;
  updatedAt: string;
};

const ITEM_COLUMNS = `id, batch_id AS batchId, folder_id AS folderId, source_path AS sourcePath, root_dir AS rootDir,
  relative_dir AS relativeDir, name, sha256, recipe, recipe_hash AS recipeHash, kind, tool_id AS toolId, state,
  wait_reason AS waitReason, wait_until AS waitUntil, error, note, uncertain, attempts, position,
  upload_key AS uploadKey, upload_url AS uploadUrl, submit_key AS submitKey, submit_request AS submitRequest,
  job_id AS jobId, result_urls AS resultUrls, shot_map AS shotMap, failed_shots AS failedShots, price, diamonds, pack_total AS packTotal, pack_completed AS packCompleted,
  pack_failed AS packFailed, submitted_at AS submittedAt, key_sent_at AS keySentAt, job_status AS jobStatus, poll_at AS pollAt, seen_running_at AS seenRunningAt,
  results_listed_at AS resultsListedAt, listed_urls AS listedUrls,
  reserved, price_sure AS priceSure, resubmits, uncertain_resubmits AS uncertainResubmits, created_at AS createdAt, updated_at AS updatedAt`;

const COLUMN_OF: Record<string, string> = {
  state: 'state',
  waitReason: 'wait_reason',
  waitUntil: 'wait_until',
  error: 'error',
  note: 'note',
  uncertain: 'uncertain',
  attempts: 'attempts',
  position: 'position',
  uploadKey: 'upload_key',
  uploadUrl: 'upload_url',
  submitKey: 'submit_key',
  submitRequest: 'submit_request',
  jobId: 'job_id',
  resultUrls: 'result_urls',
  shotMap: 'shot_map',
  price: 'price',
  diamonds: 'diamonds',
  packTotal: 'pack_total',
  packCompleted: 'pack_completed',
  packFailed: 'pack_failed',
  submittedAt: 'submitted_at',
  keySentAt: 'key_sent_at',
  recipe: 'recipe',
  recipeHash: 'recipe_hash',
  kind: 'kind',
  toolId: 'tool_id',
  sourcePath: 'source_path',
  failedShots: 'failed_shots',
  jobStatus: 'job_status',
  pollAt: 'poll_at',
  seenRunningAt: 'seen_running_at',
  resultsListedAt: 'results_listed_at',
  listedUrls: 'listed_urls',
  reserved: 'reserved',
  priceSure: 'price_sure',
  resubmits: 'resubmits',
  uncertainResubmits: 'uncertain_resubmits',
  batchId: 'batch_id',
};
export type ItemPatch = Partial<Pick<ItemRow, keyof typeof COLUMN_OF & keyof ItemRow>>;

export function getItem(db: StudioDB, id: string): ItemRow | undefined {
  return db.prepare(`SELECT ${ITEM_COLUMNS} FROM items WHERE id = ?`).get(id) as
    ItemRow | undefined;
}

export function updateItem(db: StudioDB, id: string, patch: ItemPatch, now: Date): void {
  const { sets, values } = assignments(patch);
  db.prepare(`UPDATE items SET ${sets}updated_at = ? WHERE id = ?`).run(
    ...values,
    now.toISOString(),
    id,
  );
}

/**
 * `updateItem` only while the item is still in one of `states` (checked by the same statement: a
 * Cancel written meanwhile, by this process or another, stands). Whether the item was changed.
 */
export function updateItemIn(
  db: StudioDB,
  id: string,
  states: readonly ItemState[],
  patch: ItemPatch,
  now: Date,
): boolean {
  const { sets, values } = assignments(patch);
  return (
    db
      .prepare(
        `UPDATE items SET ${sets}updated_at = ? WHERE id = ? AND state IN (${states.map(() => '?').join(', ')})`,
      )
      .run(...values, now.toISOString(), id, ...states).changes > 0
  );
}

/** The `column = ?, ` list of a patch and its values in order. */
function assignments(patch: ItemPatch): { sets: string; values: (string | number | null)[] } {
  const entries = Object.entries(patch).filter(([k]) => COLUMN_OF[k]);
  return {
    sets: entries.map(([k]) => `${COLUMN_OF[k]} = ?, `).join(''),
    values: entries.map(([, v]) =>
      typeof v === 'boolean' ? Number(v) : (v as string | number | null),
    ),
  };
}

type InsertedLater =
  | 'updatedAt'
  | 'position'
  | 'attempts'
  | 'uncertain'
  | 'waitUntil'
  | 'uploadKey'
  | 'uploadUrl'
  | 'submitKey'
  | 'submitRequest'
  | 'jobId'
  | 'resultUrls'
  | 'shotMap'
  | 'failedShots'
  | 'price'
  | 'diamonds'
  | 'packTotal'
  | 'packCompleted'
  | 'packFailed'
  | 'submittedAt'
  | 'keySentAt'
  | 'error'
  | 'jobStatus'
  | 'pollAt'
  | 'seenRunningAt'
  | 'resultsListedAt'
  | 'listedUrls'
  | 'reserved'
  | 'priceSure'
  | 'resubmits'
  | 'uncertainResubmits';
export function insertItem(
  db: StudioDB,
  item: Omit<ItemRow, InsertedLater> & { error?: string | null },
): void {
  const { maxPos } = db.prepare('SELECT COALESCE(MAX(position), 0) AS maxPos FROM items').get() as {
    maxPos: number;
  };
  db.prepare(
    `INSERT INTO items (id, batch_id, folder_id, source_path, root_dir, relative_dir, name, sha256, recipe, recipe_hash, kind,
       tool_id, state, wait_reason, error, note, position, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    item.id,
    item.batchId,
    item.folderId,
    item.sourcePath,
    item.rootDir,
    item.relativeDir,
    item.name,
    item.sha256,
    item.recipe,
    item.recipeHash,
    item.kind,
    item.toolId,
    item.state,
    item.waitReason,
    item.error ?? null,
    item.note,
    maxPos + 1,
    item.createdAt,
    item.createdAt,
  );
}

/**
 * An item with the same photo and recipe that is done or on its way (dedup); or, failing that, one
 * that failed after its job was paid for (a job the service did not report as
 * failed): that one is adopted, never submitted again. A paid item rejected or cancelled in
 * review counts too: its job's results can still be redone or collected on purpose, but dropping
 * the photo again must not pay for it a second time (review rev19 F1).
 */
export function findEquivalent(
  db: StudioDB,
  sha256: string,
  recipeHash: string,
): ItemRow | undefined {
  return db
    .prepare(
      `SELECT ${ITEM_COLUMNS} FROM items WHERE sha256 = ? AND recipe_hash = ?
       AND (state NOT IN ('failed', 'skipped', 'cancelled', 'rejected')
            OR (state IN ('failed', 'rejected', 'cancelled') AND job_id IS NOT NULL AND COALESCE(job_status, '') != 'failed'))
       ORDER BY state = 'failed', created_at LIMIT 1`,
    )
    .get(sha256, recipeHash) as ItemRow | undefined;
}

/** Whether an item holds a job the service charged and did not refund. */
export function isPaid(item: Pick<ItemRow, 'jobId' | 'jobStatus'>): boolean {
  return item.jobId !== null && item.jobStatus !== 'failed';
}

/** The smallest queue position (0 for an empty queue): moving items before it puts them first. */
export function firstPosition(db: StudioDB): number {
  return (
    db.prepare('SELECT COALESCE(MIN(position), 0) AS minPos FROM items').get() as { minPos: number }
  ).minPos;
}

export function itemsInStates(db: StudioDB, states: readonly ItemState[]): ItemRow[] {
  return db
    .prepare(
      `SELECT ${ITEM_COLUMNS} FROM items WHERE state IN (${states.map(() => '?').join(',')}) ORDER BY position`,
    )
    .all(...states) as ItemRow[];
}

type Condition = { sql: string; args: readonly (string | number)[] };

/** `WHERE a AND b` of the conditions given (absent ones left out), with their arguments in order. */
function whereAll(...conditions: (Condition | undefined)[]): {
  clause: string;
  args: (string | number)[];
} {
  const used = conditions.filter((c): c is Condition => c !== undefined);
  return {
    clause: used.length ? `WHERE ${used.map((c) => c.sql).join(' AND ')}` : '',
    args: used.flatMap((c) => c.args),
  };
}

export function listItems(
  db: StudioDB,
  q: {
    states?: readonly ItemState[];
    folderId?: string;
    batchId?: string;
    limit: number;
    offset: number;
  },
): { items: ItemRow[]; total: number } {
  const { clause, args } = whereAll(
    q.states?.length
      ? { sql: `state IN (${q.states.map(() => '?').join(',')})`, args: q.states }
      : undefined,
    q.folderId ? { sql: 'folder_id = ?', args: [q.folderId] } : undefined,
    q.batchId ? { sql: 'batch_id = ?', args: [q.batchId] } : undefined,
  );
  const { total } = db.prepare(`SELECT COUNT(*) AS total FROM items ${clause}`).get(...args) as {
    total: number;
  };
  const items = db
    .prepare(`SELECT ${ITEM_COLUMNS} FROM items ${clause} ORDER BY position LIMIT ? OFFSET ?`)
    .all(...args, q.limit, q.offset) as ItemRow[];
  return { items, total };
}

// ---- results ---------------------------------------------------------------------------------

export type ResultRow = {
  id: string;
  itemId: string;
  n: number;
  shotId: string | null;
  sha256: string;
  mime: string;
  file: string;
  thumb: string | null;
  review: ReviewState;
  exportedPath: string | null;
  compliance: string | null;
  createdAt: string;
};
const RESULT_COLUMNS = `id, item_id AS itemId, n, shot_id AS shotId, sha256, mime, file, thumb, review,
  exported_path AS exportedPath, compliance, created_at AS createdAt`;

export function insertResult(
  db: StudioDB,
  r: Omit<ResultRow, 'review' | 'exportedPath' | 'compliance'>,
): boolean {
  return (
    db
      .prepare(
        `INSERT OR IGNORE INTO results (id, item_id, n, shot_id, sha256, mime, file, thumb, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(r.id, r.itemId, r.n, r.shotId, r.sha256, r.mime, r.file, r.thumb, r.createdAt)
      .changes === 1
  );
}

export function resultsOf(db: StudioDB, itemId: string): ResultRow[] {
  return db
    .prepare(`SELECT ${RESULT_COLUMNS} FROM results WHERE item_id = ? ORDER BY n`)
    .all(itemId) as ResultRow[];
}

export function getResult(db: StudioDB, id: string): ResultRow | undefined {
  return db.prepare(`SELECT ${RESULT_COLUMNS} FROM results WHERE id = ?`).get(id) as
    ResultRow | undefined;
}

export function listResults(
  db: StudioDB,
  q: { review?: ReviewState; itemId?: string; limit: number; offset: number },
): { results: ResultRow[]; total: number } {
  const { clause, args } = whereAll(
    q.review ? { sql: 'review = ?', args: [q.review] } : undefined,
    q.itemId ? { sql: 'item_id = ?', args: [q.itemId] } : undefined,
  );
  const { total } = db.prepare(`SELECT COUNT(*) AS total FROM results ${clause}`).get(...args) as {
    total: number;
  };
  const results = db
    .prepare(
      `SELECT ${RESULT_COLUMNS} FROM results ${clause} ORDER BY created_at, item_id, n LIMIT ? OFFSET ?`,
    )
    .all(...args, q.limit, q.offset) as ResultRow[];
  return { results, total };
}

export function setReview(db: StudioDB, id: string, review: ReviewState): boolean {
  return (
    db.prepare('UPDATE results SET review = ? WHERE id = ? AND review != ?').run(review, id, review)
      .changes === 1
  );
}

/** Where a result was exported and its compliance report; null for both forgets the export. */
export function setExported(
  db: StudioDB,
  id: string,
  exportedPath: string | null,
  compliance: ComplianceReport | null,
): void {
  db.prepare('UPDATE results SET exported_path = ?, compliance = ? WHERE id = ?').run(
    exportedPath,
    compliance && JSON.stringify(compliance),
    id,
  );
}

// ---- folders, batches, settings, request log -------------------------------------------------

export type FolderRow = {
  id: string;
  path: string;
  outputDir: string;
  recipe: string;
  paused: number;
  waitReason: WaitReason | null;
};
const FOLDER_COLUMNS =
  'id, path, output_dir AS outputDir, recipe, paused, wait_reason AS waitReason';

/** The batch new photos of a folder go to (the newest), if any. */
export function folderBatch(db: StudioDB, folderId: string): BatchRow | undefined {
  const row = db
    .prepare(
      "SELECT id FROM batches WHERE folder_id = ? AND kind = 'folder' ORDER BY created_at DESC, rowid DESC LIMIT 1",
    )
    .get(folderId) as { id: string } | undefined;
  return row && getBatch(db, row.id);
}

export function getFolder(db: StudioDB, id: string): FolderRow | undefined {
  return db.prepare(`SELECT ${FOLDER_COLUMNS} FROM folders WHERE id = ?`).get(id) as
    FolderRow | undefined;
}
export function listFolders(db: StudioDB): FolderRow[] {
  return db
    .prepare(`SELECT ${FOLDER_COLUMNS} FROM folders ORDER BY created_at`)
    .all() as FolderRow[];
}

export type BatchRow = {
  id: string;
  folderId: string | null;
  kind: 'run' | 'folder';
  outputDir: string;
  autoApprove: number;
  ceiling: number | null;
  waitReason: WaitReason | null;
};
export function getBatch(db: StudioDB, id: string): BatchRow | undefined {
  return db
    .prepare(
      'SELECT id, folder_id AS folderId, kind, output_dir AS outputDir, auto_approve AS autoApprove, ceiling, wait_reason AS waitReason FROM batches WHERE id = ?',
    )
    .get(id) as BatchRow | undefined;
}
/**
 * What a batch has spent against its ceiling: its items' charges, but for a paid job it took over
 * from an earlier run (submitted before the batch began), collected for nothing, as the
 * scheduler's ceiling counts (review rev13 E4). A charge counts in the batch that paid it
 * (`paid_batch_id`), even after another batch adopted the item (review rev19 F2).
 */
export function batchSpent(db: StudioDB, batchId: string): number {
  return (
    db
      .prepare(`SELECT COALESCE(SUM(diamonds), 0) AS spent FROM items WHERE ${CHARGED_TO_BATCH}`)
      .get(batchId, batchId, batchId) as { spent: number }
  ).spent;
}

/**
 * What a batch's photos whose submission is uncertain may have cost, at their price (or what was
 * reserved for it): a lost create's charge shows nowhere until the service's balance or job says
 * so (review rev21 E: a folder showed 4 spent for a ledger of 8), while the ceiling counts it.
 */
export function batchUncertain(db: StudioDB, batchId: string): number {
  return (
    db
      .prepare(
        'SELECT COALESCE(SUM(MAX(price, reserved)), 0) AS maybe FROM items WHERE batch_id = ? AND uncertain = 1 AND diamonds = 0',
      )
      .get(batchId) as { maybe: number }
  ).maybe;
}

/**
 * The items whose charges count in a batch (three `?`: the batch's id): the charges it paid, the
 * adopted items' in the batch that paid them; an adopted charge from before `paid_batch_id` was
 * recorded is left out when submitted before the batch began (rev13 E4).
 */
export const CHARGED_TO_BATCH = `(paid_batch_id = ? OR (paid_batch_id IS NULL AND batch_id = ?
  AND (submitted_at IS NULL OR submitted_at >= (SELECT created_at FROM batches WHERE id = ?))))`;

export function getSetting(db: StudioDB, key: string): string | undefined {
  return (
    db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined
  )?.value;
}
export function setSetting(db: StudioDB, key: string, value: string): void {
  db.prepare(
    'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  ).run(key, value);
}

export function countRequest(db: StudioDB, origin: string, day: string): void {
  db.prepare(
    'INSERT INTO request_log (origin, day, count) VALUES (?, ?, 1) ON CONFLICT (origin, day) DO UPDATE SET count = count + 1',
  ).run(origin, day);
}
/** One counted request given back (it never left); never below zero. */
export function uncountRequest(db: StudioDB, origin: string, day: string): void {
  db.prepare(
    'UPDATE request_log SET count = count - 1 WHERE origin = ? AND day = ? AND count > 0',
  ).run(origin, day);
}
export function requestsOn(db: StudioDB, origin: string, day: string): number {
  return (
    (
      db.prepare('SELECT count FROM request_log WHERE origin = ? AND day = ?').get(origin, day) as
        { count: number } | undefined
    )?.count ?? 0
  );
}
