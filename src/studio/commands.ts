/**
 * The studio contract's command handlers, one per name in `StudioCommandSchemas`. Arguments are
 * validated here, once, for every transport (Electron IPC, HTTP, CLI); errors leave as
 * `{ code, message }`.
 */
import { randomUUID } from 'node:crypto';
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
import type { StudioEngine } from './engine';
import { CatalogCache } from './catalog-cache';
import type { HotFolders } from './folders';
import { checkRecipe } from './recipe-check';
import { typicalPollRequests } from './poll';
import { previewNames } from './export/naming';

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
      return folders.add({ path: path.resolve(args.path), outputDir: path.resolve(args.outputDir), recipe: args.recipe, maxDiamonds: args.maxDiamonds ?? null });
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
      return { items: items.map(store.itemView), total };
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
          const sourcePath = await folders.restoreSource(item.id);
          store.updateItem(db, item.id, { sourcePath, state: 'queued', error: null, waitReason: null, waitUntil: null, attempts: 0, uploadKey: null, uploadUrl: null, submitKey: null, submitRequest: null, submittedAt: null, jobId: null, resultUrls: null, shotMap: null, uncertain: 0 }, now());
          engine.emitItem(item.id);
        } else {
          continue;
        }
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
    'queue.resolveUncertain': async (args) => {
      const item = store.getItem(db, args.id);
      if (!item || item.uncertain !== 1) return { changed: 0 };
      if (args.action === 'resubmit') {
        // The operator checked the service: the first attempt was not charged.
        store.updateItem(db, item.id, { uncertain: 0, waitReason: null, submittedAt: null, submitKey: `submit-${item.id}-${randomUUID()}` }, now());
      } else {
        store.updateItem(db, item.id, { uncertain: 0, waitReason: null, state: 'failed', error: 'marked failed by the operator after an uncertain submission' }, now());
      }
      engine.emitItem(item.id);
      engine.kick();
      return { changed: 1 };
    },
    'results.list': async (args) => {
      const { results, total } = store.listResults(db, args);
      return { results: results.map(store.resultView), total };
    },
    'review.set': async (args) => {
      let changed = 0;
      const touched = new Set<string>();
      for (const id of args.ids) {
        if (store.setReview(db, id, args.review)) {
          changed++;
          const row = store.getResult(db, id);
          if (row) {
            touched.add(row.itemId);
            engine.events.emit('result.changed', store.resultView(row));
          }
        }
      }
      // An item whose results are all decided moves on to export.
      for (const itemId of touched) {
        const item = store.getItem(db, itemId);
        if (item?.state === 'review' && store.resultsOf(db, itemId).every((r) => r.review !== 'pending')) {
          store.updateItem(db, itemId, { state: 'exporting' }, now());
          engine.emitItem(itemId);
        }
      }
      engine.kick();
      return { changed };
    },
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
        store.setReview(db, id, 'rejected');
        let recipe = args.recipe ?? (JSON.parse(item.recipe) as NonNullable<typeof args.recipe>);
        if (!args.recipe && result.shotId && isCatalogRecipe(recipe.request)) {
          recipe = { ...recipe, request: { ...recipe.request, shotIds: [result.shotId] } };
        }
        const sourcePath = await folders.restoreSource(item.id);
        engine.enqueue({ batchId: item.batchId, folderId: item.folderId, sourcePath, rootDir: item.rootDir, sha256: item.sha256, recipe, reprocess: true });
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
        if (store.resultsOf(db, item.id).every((r) => r.review !== 'pending')) {
          store.updateItem(db, item.id, { state: 'exporting' }, now());
          engine.emitItem(item.id);
          moved++;
        }
      }
      engine.kick();
      return { exported: moved, failed: items.length - moved };
    },
    'export.preview': async (args) => {
      const ext = args.format === 'jpeg' ? 'jpg' : args.format;
      const items = args.itemIds
        ? args.itemIds.map((id) => store.getItem(db, id)).filter((i): i is store.ItemRow => i !== undefined)
        : store.listItems(db, { limit: 3, offset: 0 }).items;
      const samples = (items.length ? items : SAMPLE_ITEMS).map((item, i) => ({
        name: item.name,
        folder: item.relativeDir,
        tool: item.toolId,
        shot: i + 1,
        n: 1,
        date: now(),
        ext,
      }));
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
      let perPhoto: number;
      if (isCatalogRecipe(request)) {
        const set = await engine.client.getReadySet(request.readyTemplateSetId);
        perPhoto = 4 * (request.shotIds?.length ?? set.shotCount);
      } else {
        perPhoto = await engine.toolPrice(request.toolId ?? '');
      }
      const budget = await engine.budget();
      const diamonds = perPhoto * args.photos;
      const requests = args.photos * (2 + typicalPollRequests(isCatalogRecipe(request) ? 'catalog' : (request.toolId ?? '')));
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
