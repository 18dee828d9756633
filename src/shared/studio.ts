/**
 * The studio contract: recipes, item and result states, and the commands and events between the
 * UI (renderer, browser, CLI) and the studio engine. One map of commands and one of events; the
 * IPC bridge, the HTTP/SSE bridge and the renderer all consume these.
 */
import { z } from 'zod';
import {
  CatalogJobRequestSchema,
  GenerationRequestSchema,
  IdSchema,
  type AccountBody,
  type FashionModelEntry,
  type PoseEntry,
  type ReadyTemplateSetEntry,
  type TemplateSetEntry,
  type ToolEntry,
  type VenueEntry,
} from './api';
import type { MediaFormat } from './media-types';

/** In a recipe's image field, where each dropped photo goes. */
export const PHOTO_PLACEHOLDER = '{photo}';

type ImageFields = Record<string, string | string[]>;

/** Whether some image field (or an entry of a list field) is `"{photo}"`. */
export function mentionsPhoto(images: ImageFields | undefined): boolean {
  return Object.values(images ?? {}).some((v) =>
    Array.isArray(v) ? v.includes(PHOTO_PLACEHOLDER) : v === PHOTO_PLACEHOLDER,
  );
}

/** The image fields with every `"{photo}"` value (single or in a list) replaced by `url`. */
export function fillPhoto(images: ImageFields | undefined, url: string): ImageFields {
  const fill = (value: string) => (value === PHOTO_PLACEHOLDER ? url : value);
  return Object.fromEntries(
    Object.entries(images ?? {}).map(([key, value]) => [
      key,
      Array.isArray(value) ? value.map(fill) : fill(value),
    ]),
  );
}

export const EXPORT_PRESETS = ['original', 'amazon', 'zalando', 'shopify'] as const;
export type ExportPresetId = (typeof EXPORT_PRESETS)[number];
/**
 * What each preset is called wherever it is shown (export screen, recipe builder, compliance
 * notes). Its rules (framing, size, format) are in studio/export/presets.ts, keyed by the same ids.
 */
export const EXPORT_PRESET_LABELS: Readonly<Record<ExportPresetId, string>> = {
  original: 'Original size',
  amazon: 'Amazon main image (white, 2000 px, ≥85% fill)',
  zalando: 'Zalando (1801×2600, 1:1.44)',
  shopify: 'Shopify (2048×2048 square)',
};
export const EXPORT_FORMATS = ['jpeg', 'png', 'webp'] as const satisfies readonly MediaFormat[];
export const NAMING_TOKENS = ['name', 'folder', 'tool', 'shot', 'n', 'date', 'ext'] as const;

export const ExportSettingsSchema = z.strictObject({
  preset: z.enum(EXPORT_PRESETS).default('original'),
  format: z.enum(EXPORT_FORMATS).default('jpeg'),
  quality: z.number().int().min(1).max(100).default(90),
  naming: z.string().min(1).max(200).default('{name}-{tool}-{n}'),
});
export type ExportSettings = z.infer<typeof ExportSettingsSchema>;

/**
 * A ready-shoot recipe: a ready shoot (the service's ready template set, run as a `/v1/catalog-jobs`
 * job) replayed on each photo, optionally a subset of its shots.
 */
export const ReadyShootRequestSchema = CatalogJobRequestSchema.extend({
  readyTemplateSetId: IdSchema,
});

/**
 * A recipe: a request template plus export settings. `"{photo}"` in an image field marks where
 * each dropped photo goes.
 */
export const RecipeSchema = z.strictObject({
  request: z.union([ReadyShootRequestSchema, GenerationRequestSchema]),
  export: ExportSettingsSchema.default({
    preset: 'original',
    format: 'jpeg',
    quality: 90,
    naming: '{name}-{tool}-{n}',
  }),
});
export type Recipe = z.infer<typeof RecipeSchema>;
export type RecipeInput = z.input<typeof RecipeSchema>;

export function isReadyShootRecipe(
  request: Recipe['request'],
): request is z.infer<typeof ReadyShootRequestSchema> {
  return 'readyTemplateSetId' in request && typeof request.readyTemplateSetId === 'string';
}

/**
 * What a recipe (and each item queued with it) runs: a tool; a look (a saved template set,
 * `templateSetId`: the tool is the look's); or a ready shoot (`readyTemplateSetId`, one job of
 * several shots). Stored as `items.kind`.
 */
export const RECIPE_KINDS = ['tool', 'look', 'ready_shoot'] as const;
export type RecipeKind = (typeof RECIPE_KINDS)[number];

/** The kind of a request (also of one being edited, whose fields are not checked yet). */
export function recipeKind(request: object): RecipeKind {
  if ('readyTemplateSetId' in request) return 'ready_shoot';
  return 'templateSetId' in request ? 'look' : 'tool';
}

/**
 * The tool id a request names (a look may name none: its tool is the look's), never a kind. Stored
 * as `items.tool_id`.
 */
export function requestToolId(request: Recipe['request']): string | null {
  return !isReadyShootRecipe(request) && request.toolId ? request.toolId : null;
}

/**
 * Jobs timed, priced and named together: one tool's, or (their tool unknown to the engine) all
 * looks' or all ready shoots'. Keys the learnt job times and prices, and is the `{tool}` token of
 * exported file names.
 */
export function jobGroup(kind: RecipeKind, toolId: string | null): string {
  return kind === 'ready_shoot' ? 'ready_shoot' : (toolId ?? kind);
}

/** The job group of a recipe's request. */
export const requestJobGroup = (request: Recipe['request']): string =>
  jobGroup(recipeKind(request), requestToolId(request));

export const ITEM_STATES = [
  'queued',
  'uploading',
  'submitting',
  'processing',
  'downloading',
  'review',
  'exporting',
  'exported',
  'failed',
  /** Not a usable photo (the hot folder's check), or every result declined in review: not a failure. */
  'rejected',
  'skipped',
  'cancelled',
] as const;
export type ItemState = (typeof ITEM_STATES)[number];
/** The states of an item the engine is working on (a photo in review waits for the operator). */
export const ACTIVE_STATES: readonly ItemState[] = [
  'queued',
  'uploading',
  'submitting',
  'processing',
  'downloading',
  'exporting',
];
export const TERMINAL_STATES: readonly ItemState[] = [
  'exported',
  'failed',
  'rejected',
  'skipped',
  'cancelled',
];

/** Why an item is not moving; shown to the operator next to it. */
export const WAIT_REASONS = [
  'paused',
  'no_diamonds',
  'daily_cap',
  'offline',
  'service_error',
  'ceiling',
  'uncertain',
  // Not started while the service refuses to show paid jobs (a poll's 402/403: a plan's gate).
  'jobs_hidden',
] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];
/**
 * Holds that keep a photo from being sent at all (time or the operator moves it on): one held so
 * at `submitting` was refused before any charge, and reads and cancels as a queued photo.
 */
export const HELD_UNSENT: readonly WaitReason[] = [
  'no_diamonds',
  'ceiling',
  'daily_cap',
  'paused',
  'jobs_hidden',
];

export const REVIEW_STATES = ['pending', 'approved', 'rejected'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

export type ItemView = {
  id: string;
  batchId: string;
  folderId: string | null;
  name: string;
  relativeDir: string;
  sourcePath: string;
  sha256: string;
  state: ItemState;
  waitReason: WaitReason | null;
  waitUntil: string | null;
  error: string | null;
  note: string | null;
  /** Shots of a ready shoot that failed; `queue.retry` runs them again, alone. */
  failedShots: string[];
  uncertain: boolean;
  /**
   * Its create went out and no answer was kept (lost, or uncertain): the service may have charged
   * it already, so it is neither "to pay" nor certainly spent. Absent from older studios.
   */
  maybeCharged?: boolean;
  /**
   * A file that is no usable photo (not an image, cut short, damaged): never sent, nothing spent,
   * its reason in `error`. Its state is `rejected`; the operator sees a failure. Absent from older studios.
   */
  badFile?: boolean;
  kind: RecipeKind;
  /** The tool the recipe names; null for a ready shoot, and for a look that names none. */
  toolId: string | null;
  /** The recipe snapshot this photo was queued with (a folder's later edits do not change it). */
  recipe: Recipe;
  jobId: string | null;
  diamonds: number;
  packTotal: number | null;
  packCompleted: number | null;
  packFailed: number | null;
  position: number;
  createdAt: string;
  updatedAt: string;
};

export type ResultView = {
  id: string;
  itemId: string;
  shotId: string | null;
  n: number;
  mime: string;
  sha256: string;
  review: ReviewState;
  exportedPath: string | null;
  compliance: StoredComplianceReport | null;
  /** Library-relative paths (`/`-separated) of the file and its thumbnail. */
  file: string;
  thumb: string | null;
  createdAt: string;
};

// ---- Compliance reports (written by studio/export/compliance.ts, stored with each export) ------

export const COMPLIANCE_CHECK_IDS = [
  'format',
  'size',
  'colour-space',
  'icc-profile',
  'background',
  'fill',
  'preview',
  'upscale',
  'padding',
] as const;

export const ComplianceCheckSchema = z.object({
  id: z.enum(COMPLIANCE_CHECK_IDS),
  ok: z.boolean(),
  /** A failed `error` check makes the file not ready to upload; a failed `warning` says why to look. */
  severity: z.enum(['error', 'warning']),
  value: z.string(),
  expected: z.string(),
  message: z.string(),
});
export type ComplianceCheck = z.infer<typeof ComplianceCheckSchema>;

export const ComplianceVerdictSchema = z.enum(['pass', 'warn', 'fail']);
export type ComplianceVerdict = z.infer<typeof ComplianceVerdictSchema>;

/** The report an export writes: what was checked against the preset, and the verdict. */
export const ComplianceReportSchema = z.object({
  preset: z.enum(EXPORT_PRESETS),
  /** Ready to upload: every `error` check passed. */
  ok: z.boolean(),
  /** fail: an error check failed; warn: only warnings failed; pass: nothing failed. */
  verdict: ComplianceVerdictSchema,
  checks: z.array(ComplianceCheckSchema),
  /** Things the user should know that are not failures (forced JPEG, upscaling...). */
  notes: z.array(z.string()),
});
export type ComplianceReport = z.infer<typeof ComplianceReportSchema>;

/**
 * A report as every stored version has it (severity and verdict came later; check ids have
 * changed), which is what a result shows: a report written today satisfies it.
 */
export const StoredComplianceReportSchema = z.object({
  ok: z.boolean(),
  verdict: ComplianceVerdictSchema.optional(),
  checks: z.array(
    ComplianceCheckSchema.extend({
      id: z.string(),
      severity: ComplianceCheckSchema.shape.severity.optional(),
    }),
  ),
});
export type StoredComplianceReport = z.infer<typeof StoredComplianceReportSchema>;

export type FolderView = {
  id: string;
  path: string;
  outputDir: string;
  recipe: Recipe;
  paused: boolean;
  waitReason: WaitReason | null;
  /** The folder batch's diamond ceiling (null: none) and what the batch has spent so far. */
  maxDiamonds: number | null;
  diamondsSpent: number;
  /**
   * What its photos whose submission is uncertain may have cost (their price each): counted
   * against the ceiling, not in `diamondsSpent` until the service shows the charge.
   */
  diamondsUncertain: number;
  /**
   * The folder is not there (moved, deleted, a network share that dropped): photos in it fail as
   * missing until it is back, when they are taken again.
   */
  missing: boolean;
};

export type BudgetView = {
  diamondBalance: number | null;
  /** When the balance shown was read from the service (it follows known charges since; null: never read). */
  diamondBalanceReadAt: string | null;
  requestsUsedToday: number;
  /** The configured cap (`--daily-cap` or Settings; null: none). */
  dailyCap: number | null;
  /**
   * Today's requests left against the cap in use: the configured one, or the service's as its
   * 429 named it when lower (then `serviceCapNamedOn` is the UTC day it was named). Null: no cap.
   */
  requestsLeftToday: number | null;
  capInUse: number | null;
  serviceCapNamedOn: string | null;
  mode: 'embedded' | 'remote';
};

export type Estimate = {
  photos: number;
  diamonds: number;
  requests: number;
  diamondBalance: number | null;
  requestsLeftToday: number | null;
  affordable: boolean;
  withinRequestBudget: boolean;
};

/** Everything the pickers show, read once from the service (`GET /v1/...`). */
export type CatalogView = {
  tools: ToolEntry[];
  fashionModels: FashionModelEntry[];
  venues: VenueEntry[];
  poses: PoseEntry[];
  readyShoots: ReadyTemplateSetEntry[];
  /** Where the copy came from: the studio keeps the catalog on disk for a day. */
  cache?: CatalogCacheInfo;
};

/**
 * The age of a cached catalog. `stale` with an `error`: the service could not be asked (offline,
 * 429, 5xx) and this is the last copy; `warnings`: lists that could not be read whole.
 */
export type CatalogCacheInfo = {
  fetchedAt: string;
  ageSeconds: number;
  stale: boolean;
  error: string | null;
  warnings: string[];
};

export type AccountView = Omit<AccountBody, 'success'> & {
  mode: 'embedded' | 'remote';
  serviceUrl: string | null;
};

/** A look: a result's settings saved on the service (a template set, `/v1/template-sets`). */
export type LookView = TemplateSetEntry;

// ---- Commands: name -> [argument schema, result type] ------------------------------------------

const Id = IdSchema;
/** A batch's diamond ceiling: work pauses before it would be crossed; null lifts it. */
const MaxDiamonds = z.number().int().min(1).max(100_000_000).nullable();
export const StudioCommandSchemas = {
  'folders.list': z.object({}),
  'folders.add': z.strictObject({
    path: z.string().min(1),
    outputDir: z.string().min(1),
    recipe: RecipeSchema,
    maxDiamonds: MaxDiamonds.optional(),
  }),
  'folders.remove': z.strictObject({ id: Id }),
  'folders.setRecipe': z.strictObject({ id: Id, recipe: RecipeSchema }),
  'folders.pause': z.strictObject({ id: Id, paused: z.boolean() }),
  'folders.setCeiling': z.strictObject({ id: Id, maxDiamonds: MaxDiamonds }),
  'queue.list': z.strictObject({
    states: z.array(z.enum(ITEM_STATES)).optional(),
    folderId: Id.optional(),
    limit: z.number().int().min(1).max(10_000).default(500),
    offset: z.number().int().min(0).default(0),
  }),
  'queue.pause': z.strictObject({ paused: z.boolean() }),
  'queue.cancel': z.strictObject({ ids: z.array(Id).min(1) }),
  /** Generates again: costs diamonds (the UI shows the price and asks first). */
  'queue.retry': z.strictObject({ ids: z.array(Id).min(1) }),
  /** What `queue.retry` would charge, and what it only collects (already paid): sends nothing. */
  'queue.retryPrice': z.strictObject({ ids: z.array(Id).min(1) }),
  /** Exports results already paid for again, with the folder's current export settings: free. */
  'queue.exportAgain': z.strictObject({ ids: z.array(Id).min(1) }),
  'queue.reprocess': z.strictObject({ ids: z.array(Id).min(1) }),
  'queue.moveToFront': z.strictObject({ ids: z.array(Id).min(1) }),
  'queue.resolveUncertain': z.strictObject({ id: Id, action: z.enum(['resubmit', 'fail']) }),
  'results.list': z.strictObject({
    review: z.enum(REVIEW_STATES).optional(),
    itemId: Id.optional(),
    limit: z.number().int().min(1).max(10_000).default(500),
    offset: z.number().int().min(0).default(0),
  }),
  /** Setting an exported result back to pending or rejected un-exports it (its files are removed). */
  'review.set': z.strictObject({
    ids: z.array(Id).min(1),
    review: z.enum(['approved', 'rejected', 'pending']),
  }),
  'review.redo': z.strictObject({ resultIds: z.array(Id).min(1), recipe: RecipeSchema.optional() }),
  /** What `review.redo` would queue and cost: declines nothing, sends no job. */
  'review.redoPrice': z.strictObject({
    resultIds: z.array(Id).min(1),
    recipe: RecipeSchema.optional(),
    /** Ask the service for prices not known yet (the confirm does; the hint at each focus does not). */
    askPrices: z.boolean().default(false),
  }),
  'export.run': z.strictObject({ itemIds: z.array(Id).optional() }),
  'export.preview': z.strictObject({
    naming: z.string().min(1).max(200),
    format: z.enum(EXPORT_FORMATS).default('jpeg'),
    itemIds: z.array(Id).max(50).optional(),
    /** A folder not yet added: its own photos (the first few) name the preview. */
    folderPath: z.string().min(1).max(4096).optional(),
    /** What the recipe makes: the tool id, or the shot ids of a ready shoot (one name per shot). */
    tool: z.string().min(1).max(100).optional(),
    shots: z.array(z.string().min(1).max(100)).max(50).optional(),
  }),
  'budget.get': z.object({}),
  'account.get': z.object({}),
  'connection.check': z.strictObject({
    baseUrl: z.url({ protocol: /^https?$/ }),
    apiKey: z.string().trim().min(8).max(300),
  }),
  'catalog.get': z.object({ refresh: z.boolean().optional() }),
  'looks.list': z.object({ refresh: z.boolean().optional() }),
  'looks.save': z.strictObject({ resultId: Id, label: z.string().trim().min(1).max(120) }),
  'looks.delete': z.strictObject({ id: Id }),
  'recipe.estimate': z.strictObject({ recipe: RecipeSchema, photos: z.number().int().min(0) }),
} as const;

export type StudioCommandName = keyof typeof StudioCommandSchemas;
export type StudioCommandArgs<K extends StudioCommandName> = z.input<
  (typeof StudioCommandSchemas)[K]
>;

type RedoAnswer = {
  queued: number;
  alreadyQueued: number;
  alreadyRedone: number;
  diamonds: number | null;
};

export type StudioCommandResults = {
  'folders.list': FolderView[];
  'folders.add': FolderView;
  'folders.remove': { removed: true };
  'folders.setRecipe': FolderView;
  'folders.pause': FolderView;
  'folders.setCeiling': FolderView;
  'queue.list': { items: ItemView[]; total: number; paused: boolean };
  'queue.pause': { paused: boolean };
  'queue.cancel': { changed: number };
  'queue.retry': { changed: number };
  /** Photos sent again (paid) and their price (null: not known); photos only collected (free). */
  'queue.retryPrice': { charged: number; collected: number; diamonds: number | null };
  'queue.exportAgain': { changed: number };
  /** alreadyQueued: photos whose item or requeue is still on its way, not queued again. */
  'queue.reprocess': { changed: number; alreadyQueued: number };
  'queue.moveToFront': { changed: number };
  'queue.resolveUncertain': { changed: number };
  'results.list': { results: ResultView[]; total: number };
  'review.set': { changed: number; unexported: number };
  /**
   * Photos queued again (one job each), photos whose same redo was already on its way (not queued
   * again), photos whose selected results a later job already replaced (a stale press: nothing
   * queued), and what the queued jobs cost at the known prices (null: a price is not known).
   */
  'review.redo': RedoAnswer;
  /** As `review.redo` would answer now, and photos whose one job remakes more than was selected. */
  'review.redoPrice': RedoAnswer & { whole: number };
  'export.run': { exported: number; failed: number };
  'export.preview': { names: string[] } | { error: string };
  'budget.get': BudgetView;
  'account.get': AccountView;
  'connection.check': AccountView;
  'catalog.get': CatalogView;
  'looks.list': LookView[];
  'looks.save': { id: string };
  'looks.delete': { deleted: true };
  'recipe.estimate': Estimate;
};

// ---- Events --------------------------------------------------------------------------------

export type StudioEvents = {
  'item.changed': ItemView;
  'result.added': ResultView;
  'result.changed': ResultView;
  'budget.changed': BudgetView;
  'folder.changed': FolderView;
  'batch.finished': { batchId: string; exported: number; failed: number; skipped: number };
};
export type StudioEventName = keyof StudioEvents;
export type StudioEvent = {
  [K in StudioEventName]: { type: K; data: StudioEvents[K] };
}[StudioEventName];

/** Errors that cross the boundary are coerced to this shape. */
export type StudioError = { code: string; message: string };
