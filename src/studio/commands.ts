/**
 * The studio contract's command handlers, one per name in `StudioCommandSchemas`. Arguments are
 * validated here, once, for every transport (Electron IPC, HTTP, CLI); errors leave as
 * `{ code, message }`.
 */
import path from 'node:path';
import { z } from 'zod';
import { ApiError, HttpClient } from '../client';
import {
  isCatalogRecipe,
  StudioCommandSchemas,
  type StudioCommandName,
  type StudioCommandResults,
  type StudioError,
} from '../shared/studio';
import * as store from './db/store';
import { retryItem } from './queue';
import type { StudioEngine } from './engine';
import { CatalogCache } from './catalog-cache';
import { FolderRefused, type HotFolders } from './folders';
import { checkRecipe as checkRequest } from './recipe-check';
import { typicalPollRequests } from './poll';
import { previewNames, validatePattern } from './export/naming';
import { setReviews, settleItem } from './review';
import type { Recipe } from '../shared/studio';
import fs from 'node:fs';

/** The request and the export settings, both checked before anything is saved or charged. */
async function checkRecipe(client: StudioEngine['client'], recipe: Recipe): Promise<string | null> {
  const naming = validatePattern(recipe.export.naming);
  if (!naming.ok) return `the file-name pattern is not valid: ${naming.error}.`;
  return checkRequest(client, recipe);
}

const PHOTO_EXTENSIONS = /\.(jpe?g|png|webp|heic|heif|avif|tiff?)$/i;

export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Handlers = { [K in StudioCommandName]: (args: z.output<(typeof StudioCommandSchemas)[K]>) => Promise<StudioCommandResults[K]> };

export function createCommands(engine: StudioEngine, folders: HotFolders): Handlers {
  const db = engine.db;
  // The studio data folder holds studio.db; the catalog cache file sits next to it.
  const catalogCache = new CatalogCache(engine.client, { dataDir: path.dirname(db.name), now: () => engine.now() });
  const now = () => engine.now();
  const itemIds = (ids: string[], states: readonly string[]) =>
    ids.map((id) => store.getItem(db, id)).filter((i): i is store.ItemRow => i !== undefined && states.includes(i.state));

  return {
    'folders.list': async () => store.listFolders(db).map((row) => store.folderViewOf(db, row)),
    'folders.add': async (args) => {
      const problem = await checkRecipe(engine.client, args.recipe);
      if (problem) throw new CommandError('invalid_recipe', problem);
      try {
        return await folders.add({ path: path.resolve(args.path), outputDir: path.resolve(args.outputDir), recipe: args.recipe, maxDiamonds: args.maxDiamonds ?? null });
      } catch (err) {
        if (err instanceof FolderRefused) throw new CommandError('folder_refused', err.message);
        throw err;
      }
    },
    'folders.remove': async (args) => {
      await folders.remove(args.id);
      return { removed: true };
    },
    'folders.setRecipe': async (args) => {
      const problem = await checkRecipe(engine.client, args.recipe);
      if (problem) throw new CommandError('invalid_recipe', problem);
      return folders.setRecipe(args.id, args.recipe);
    },
    'folders.pause': async (args) => folders.setPaused(args.id, args.paused),
    'folders.setCeiling': async (args) => folders.setCeiling(args.id, args.maxDiamonds),
    'queue.list': async (args) => {
      const { items, total } = store.listItems(db, { ...args, ...(args.states ? { states: args.states } : {}) });
      return { items: items.map(store.itemView), total, paused: engine.paused };
    },
    'queue.pause': async (args) => {
      engine.setPaused(args.paused);
      return { paused: args.paused };
    },
    'queue.cancel': async (args) => {
      // Items already at the service (processing) keep their job: cancelling them would not refund.
      const items = itemIds(args.ids, ['queued', 'uploading', 'review']);
      for (const item of items) store.updateItem(db, item.id, { state: 'cancelled', waitReason: null }, now());
      items.forEach((i) => engine.emitItem(i.id));
      return { changed: items.length };
    },
    'queue.retry': async (args) => {
      let changed = 0;
      // Failed or cancelled items; and pack items past their job whose shots partly failed.
      const retryable = args.ids
        .map((id) => store.getItem(db, id))
        .filter((i): i is store.ItemRow => i !== undefined && (i.state === 'failed' || i.state === 'cancelled' || (i.failedShots !== null && !['queued', 'uploading', 'submitting', 'processing', 'downloading'].includes(i.state))));
      for (const item of retryable) {
        const recipe = JSON.parse(item.recipe) as Parameters<StudioEngine['enqueue']>[0]['recipe'];
        const failedShots = item.failedShots ? (JSON.parse(item.failedShots) as string[]) : [];
        if (failedShots.length && isCatalogRecipe(recipe.request)) {
          // Only the shots that failed go again, as a new item; this one keeps what succeeded.
          const sourcePath = await folders.restoreSource(item.id);
          store.updateItem(db, item.id, { failedShots: null, note: `${failedShots.length} failed shot(s) queued again as a new item` }, now());
          engine.emitItem(item.id);
          engine.enqueue({ batchId: item.batchId, folderId: item.folderId, sourcePath, rootDir: item.rootDir, sha256: item.sha256, recipe: { ...recipe, request: { ...recipe.request, shotIds: failedShots } }, reprocess: true });
        } else if (item.state === 'failed' || item.state === 'cancelled') {
          // A job already paid for is collected again (poll, download, export), never resubmitted.
          retryItem(db, item, await folders.restoreSource(item.id), now());
          engine.emitItem(item.id);
        } else {
          continue;
        }
        changed++;
      }
      engine.kick();
      return { changed };
    },
    'queue.exportAgain': async (args) => {
      // Results already paid for are written again; nothing is sent to the service.
      let changed = 0;
      for (const item of itemIds(args.ids, ['failed'])) {
        const results = store.resultsOf(db, item.id);
        if (results.length === 0) continue;
        const folder = item.folderId ? store.getFolder(db, item.folderId) : undefined;
        // The folder's current export settings (a fixed naming pattern, say); the look stays the snapshot's.
        const recipe = folder ? { ...(JSON.parse(item.recipe) as Recipe), export: store.folderView(folder).recipe.export } : undefined;
        const sourcePath = await folders.restoreSource(item.id);
        store.updateItem(db, item.id, { state: 'review', sourcePath, error: null, waitReason: null, waitUntil: null, ...(recipe ? { recipe: JSON.stringify(recipe) } : {}) }, now());
        engine.emitItem(item.id);
        settleItem(engine, item.id);
        changed++;
      }
      engine.kick();
      return { changed };
    },
    'queue.reprocess': async (args) => {
      let changed = 0;
      for (const id of args.ids) {
        const item = store.getItem(db, id);
        if (!item) continue;
        const sourcePath = await folders.restoreSource(item.id);
        engine.enqueue({ batchId: item.batchId, folderId: item.folderId, sourcePath, rootDir: item.rootDir, sha256: item.sha256, recipe: JSON.parse(item.recipe) as Parameters<StudioEngine['enqueue']>[0]['recipe'], reprocess: true });
        changed++;
      }
      return { changed };
    },
    'queue.moveToFront': async (args) => {
      const { minPos } = db.prepare('SELECT COALESCE(MIN(position), 0) AS minPos FROM items').get() as { minPos: number };
      args.ids.forEach((id, i) => store.updateItem(db, id, { position: minPos - args.ids.length + i }, now()));
      args.ids.forEach((id) => engine.emitItem(id));
      engine.kick();
      return { changed: args.ids.length };
    },
    'queue.resolveUncertain': async (args) => ({ changed: engine.resolveUncertain(args.id, args.action) ? 1 : 0 }),
    'results.list': async (args) => {
      const { results, total } = store.listResults(db, args);
      return { results: results.map(store.resultView), total };
    },
    'review.set': async (args) => setReviews(engine, folders, args.ids, args.review),
    'review.redo': async (args) => {
      if (args.recipe) {
        const problem = await checkRecipe(engine.client, args.recipe);
        if (problem) throw new CommandError('invalid_recipe', problem);
      }
      let queued = 0;
      for (const id of args.resultIds) {
        const result = store.getResult(db, id);
        const item = result && store.getItem(db, result.itemId);
        if (!result || !item) continue;
        // The old result is declined, and says so at once: "approve all" must never export it.
        if (store.setReview(db, id, 'rejected')) engine.events.emit('result.changed', store.resultView(store.getResult(db, id)!));
        let recipe = args.recipe ?? (JSON.parse(item.recipe) as NonNullable<typeof args.recipe>);
        if (!args.recipe && result.shotId && isCatalogRecipe(recipe.request)) {
          recipe = { ...recipe, request: { ...recipe.request, shotIds: [result.shotId] } };
        }
        const sourcePath = await folders.restoreSource(item.id);
        engine.enqueue({ batchId: item.batchId, folderId: item.folderId, sourcePath, rootDir: item.rootDir, sha256: item.sha256, recipe, reprocess: true });
        settleItem(engine, item.id);
        queued++;
      }
      return { queued };
    },
    'export.run': async (args) => {
      const items = args.itemIds
        ? itemIds(args.itemIds, ['review'])
        : store.itemsInStates(db, ['review']);
      let moved = 0;
      for (const item of items) {
        settleItem(engine, item.id);
        if (store.getItem(db, item.id)?.state === 'exporting') moved++;
      }
      engine.kick();
      return { exported: moved, failed: items.length - moved };
    },
    'export.preview': async (args) => {
      const ext = args.format === 'jpeg' ? 'jpg' : args.format;
      // The folder's own photos, never another folder's; example names only when it has none yet.
      const items = args.itemIds
        ? args.itemIds.map((id) => store.getItem(db, id)).filter((i): i is store.ItemRow => i !== undefined)
        : args.folderPath
          ? photosIn(args.folderPath).map((name) => ({ name, relativeDir: '', toolId: args.tool ?? 'virtual_model' }))
          : [];
      const photos = (items.length ? items : SAMPLE_ITEMS).slice(0, 3);
      const tool = (item: { toolId: string }) => args.tool ?? item.toolId;
      // A ready shoot names one file per shot (the real shot ids); a tool makes one result per photo.
      const samples = photos.flatMap((item) =>
        (args.shots?.length ? args.shots.slice(0, 3) : [null]).map((shot, i) => ({
          name: item.name,
          folder: item.relativeDir,
          tool: tool(item),
          shot: shot ?? '1',
          n: i + 1,
          date: now(),
          ext,
        })),
      );
      const preview = previewNames(args.naming, samples);
      return preview.ok ? { names: preview.names } : { error: preview.error };
    },
    'budget.get': async () => engine.budget(),
    'account.get': async () => {
      const account = await engine.client.getAccount();
      const remote = engine.client.origin !== 'embedded';
      return { ...account, mode: remote ? 'remote' : 'embedded', serviceUrl: remote ? engine.client.origin : null };
    },
    'connection.check': async (args) => {
      // A live GET /v1/account against the candidate service, without touching the current one.
      const candidate = new HttpClient({ baseUrl: args.baseUrl, apiKey: args.apiKey, timeoutMs: 10_000 });
      try {
        return { ...(await candidate.getAccount()), mode: 'remote', serviceUrl: candidate.origin };
      } catch (err) {
        if (err instanceof ApiError) throw new CommandError('connection_failed', `${args.baseUrl} answered: ${err.message}`);
        throw new CommandError('connection_failed', `Could not reach ${args.baseUrl}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        await candidate.close();
      }
    },
    // The recipe builder's reads: from the on-disk catalog cache (a day; the last copy when offline).
    'catalog.get': async (args) => catalogCache.catalog(args),
    'looks.list': async (args) => catalogCache.looks(args),
    'looks.save': async (args) => {
      const result = store.getResult(db, args.resultId);
      const item = result && store.getItem(db, result.itemId);
      if (!item?.jobId) throw new CommandError('not_found', `result ${args.resultId} has no finished job to save as a look`);
      const saved = await engine.client.createTemplateSet({ label: args.label, sourceMediaId: item.jobId });
      await catalogCache.forgetLooks();
      return saved;
    },
    'looks.delete': async (args) => {
      await engine.client.deleteTemplateSet(args.id);
      await catalogCache.forgetLooks();
      return { deleted: true };
    },
    'recipe.estimate': async (args) => {
      const problem = await checkRecipe(engine.client, args.recipe);
      if (problem) throw new CommandError('invalid_recipe', problem);
      const request = args.recipe.request;
      // The same price the scheduler admits photos at: learnt from the balance or a 402 when known.
      await engine.spending.loadPrices();
      if (isCatalogRecipe(request) && !request.shotIds?.length) await engine.spending.shotCount(request.readyTemplateSetId);
      const perPhoto = engine.spending.quote(args.recipe)?.diamonds ?? 0;
      const budget = await engine.budget();
      const diamonds = perPhoto * args.photos;
      const requests = args.photos * (2 + typicalPollRequests(isCatalogRecipe(request) ? 'catalog' : (request.toolId ?? '')) - 1);
      const requestsLeftToday = budget.dailyCap === null ? null : Math.max(0, budget.dailyCap - budget.requestsUsedToday);
      return {
        photos: args.photos,
        diamonds,
        requests,
        diamondBalance: budget.diamondBalance,
        requestsLeftToday,
        affordable: budget.diamondBalance === null || budget.diamondBalance >= diamonds,
        withinRequestBudget: requestsLeftToday === null || requestsLeftToday >= requests,
      };
    },
  };
}

/** The first few photo files at the top of a folder (by name), for previews; none if unreadable. */
function photosIn(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && !e.name.startsWith('.') && PHOTO_EXTENSIONS.test(e.name))
      .map((e) => e.name)
      .sort()
      .slice(0, 3);
  } catch {
    return [];
  }
}

const SAMPLE_ITEMS = [
  { name: 'look-042.jpg', relativeDir: 'spring', toolId: 'virtual_model' },
  { name: 'look-043.jpg', relativeDir: '', toolId: 'virtual_model' },
];

/** Validates and runs one command; every failure becomes `{ code, message }`. */
export async function runCommand(handlers: Handlers, name: string, args: unknown): Promise<{ ok: true; result: unknown } | { ok: false; error: StudioError }> {
  if (!Object.hasOwn(StudioCommandSchemas, name)) return { ok: false, error: { code: 'unknown_command', message: `unknown command '${name}'` } };
  const key = name as StudioCommandName;
  const parsed = StudioCommandSchemas[key].safeParse(args ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: { code: 'invalid_arguments', message: issue ? `${issue.path.join('.') || name}: ${issue.message}` : 'invalid arguments' } };
  }
  try {
    const handler = handlers[key] as (a: unknown) => Promise<unknown>;
    return { ok: true, result: await handler(parsed.data) };
  } catch (err) {
    if (err instanceof CommandError) return { ok: false, error: { code: err.code, message: err.message } };
    if (err instanceof ApiError) return { ok: false, error: { code: `service_${err.status}`, message: err.message } };
    return { ok: false, error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } };
  }
}
