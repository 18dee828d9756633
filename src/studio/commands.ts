/**
 * The studio contract's command handlers, one per name in `StudioCommandSchemas`. Arguments are
 * validated here, once, for every transport (Electron IPC, HTTP, CLI); errors leave as
 * `{ code, message }`. Handlers only route: the rules live in the modules they call (queue
 * actions, redo, export preview, recipe checks and estimates, the hot folders, review).
 */
import path from 'node:path';
import type { z } from 'zod';
import { ApiError, HttpClient } from '../client';
import {
  StudioCommandSchemas,
  type StudioCommandName,
  type StudioCommandResults,
  type StudioError,
} from '../shared/studio';
import { CatalogCache } from './catalog-cache';
import { CommandError } from './command-error';
import * as store from './db/store';
import type { StudioEngine } from './engine';
import { previewExportNames } from './export-preview';
import { FolderRefused, type HotFolders } from './folders';
import {
  cancelItems,
  exportAgain,
  exportReviewed,
  moveToFront,
  reprocessItems,
  retryItems,
  retryPrice,
} from './queue-actions';
import { assertRecipeUsable } from './recipe-problem';
import { estimateRecipe } from './recipe-estimate';
import { setReviews } from './review';
import { previewRedo, redoResults } from './review-redo';

export { CommandError };

type Handlers = {
  [K in StudioCommandName]: (
    args: z.output<(typeof StudioCommandSchemas)[K]>,
  ) => Promise<StudioCommandResults[K]>;
};

export function createCommands(engine: StudioEngine, folders: HotFolders): Handlers {
  const db = engine.db;
  // The studio data folder holds studio.db; the catalog cache file sits next to it.
  const catalogCache = new CatalogCache(engine.client, {
    dataDir: path.dirname(db.name),
    now: () => engine.now(),
  });

  return {
    'folders.list': async () => store.listFolders(db).map((row) => store.folderViewOf(db, row)),
    'folders.add': async (args) => {
      await assertRecipeUsable(engine.client, args.recipe);
      try {
        return await folders.add({
          path: path.resolve(args.path),
          outputDir: path.resolve(args.outputDir),
          recipe: args.recipe,
          maxDiamonds: args.maxDiamonds ?? null,
        });
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
      await assertRecipeUsable(engine.client, args.recipe);
      return folders.setRecipe(args.id, args.recipe);
    },
    'folders.pause': async (args) => folders.setPaused(args.id, args.paused),
    'folders.setCeiling': async (args) => folders.setCeiling(args.id, args.maxDiamonds),
    'queue.list': async (args) => {
      const { items, total } = store.listItems(db, {
        ...args,
        ...(args.states ? { states: args.states } : {}),
      });
      return { items: items.map(store.itemView), total, paused: engine.paused };
    },
    'queue.pause': async (args) => {
      engine.setPaused(args.paused);
      return { paused: args.paused };
    },
    'queue.cancel': async (args) => ({ changed: cancelItems(engine, args.ids) }),
    'queue.retry': async (args) => ({ changed: await retryItems(engine, folders, args.ids) }),
    'queue.retryPrice': async (args) => retryPrice(engine, args.ids),
    'queue.exportAgain': async (args) => ({
      changed: await exportAgain(engine, folders, args.ids),
    }),
    'queue.reprocess': (args) => reprocessItems(engine, folders, args.ids),
    'queue.moveToFront': async (args) => ({ changed: moveToFront(engine, args.ids) }),
    'queue.resolveUncertain': async (args) => ({
      changed: engine.resolveUncertain(args.id, args.action) ? 1 : 0,
    }),
    'results.list': async (args) => {
      const { results, total } = store.listResults(db, args);
      return { results: results.map(store.resultView), total };
    },
    'review.set': async (args) => setReviews(engine, folders, args.ids, args.review),
    'review.redo': async (args) => {
      if (args.recipe) await assertRecipeUsable(engine.client, args.recipe);
      return redoResults(engine, folders, args.resultIds, args.recipe);
    },
    'review.redoPrice': async (args) => {
      if (args.recipe) await assertRecipeUsable(engine.client, args.recipe);
      return previewRedo(engine, args.resultIds, args.recipe, args.askPrices);
    },
    'export.run': async (args) => exportReviewed(engine, args.itemIds),
    'export.preview': async (args) => previewExportNames(db, args, engine.now()),
    'budget.get': async () => engine.budget(),
    'account.get': async () => {
      const account = await engine.account();
      const remote = engine.client.origin !== 'embedded';
      return {
        ...account,
        mode: remote ? 'remote' : 'embedded',
        serviceUrl: remote ? engine.client.origin : null,
      };
    },
    'connection.check': async (args) => {
      // A live GET /v1/account against the candidate service, without touching the current one.
      const candidate = new HttpClient({
        baseUrl: args.baseUrl,
        apiKey: args.apiKey,
        timeoutMs: 10_000,
      });
      try {
        return { ...(await candidate.getAccount()), mode: 'remote', serviceUrl: candidate.origin };
      } catch (err) {
        // Status 0: no answer at all, and the message already says it could not be reached.
        if (err instanceof ApiError && err.status !== 0)
          throw new CommandError('connection_failed', `${args.baseUrl} answered: ${err.message}`);
        if (err instanceof ApiError) throw new CommandError('connection_failed', err.message);
        throw new CommandError(
          'connection_failed',
          `Could not reach ${args.baseUrl}: ${err instanceof Error ? err.message : String(err)}`,
        );
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
      if (!item?.jobId)
        throw new CommandError(
          'not_found',
          `result ${args.resultId} has no finished job to save as a look`,
        );
      const saved = await engine.client.createTemplateSet({
        label: args.label,
        sourceMediaId: item.jobId,
      });
      await catalogCache.forgetLooks();
      return saved;
    },
    'looks.delete': async (args) => {
      await engine.client.deleteTemplateSet(args.id);
      await catalogCache.forgetLooks();
      return { deleted: true };
    },
    'recipe.estimate': async (args) => {
      await assertRecipeUsable(engine.client, args.recipe);
      return estimateRecipe(engine, args.recipe, args.photos);
    },
  };
}

/** Validates and runs one command; every failure becomes `{ code, message }`. */
export async function runCommand(
  handlers: Handlers,
  name: string,
  args: unknown,
): Promise<{ ok: true; result: unknown } | { ok: false; error: StudioError }> {
  if (!Object.hasOwn(StudioCommandSchemas, name))
    return { ok: false, error: { code: 'unknown_command', message: `unknown command '${name}'` } };
  const key = name as StudioCommandName;
  const parsed = StudioCommandSchemas[key].safeParse(args ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: {
        code: 'invalid_arguments',
        message: issue ? `${issue.path.join('.') || name}: ${issue.message}` : 'invalid arguments',
      },
    };
  }
  try {
    const handler = handlers[key] as (a: unknown) => Promise<unknown>;
    return { ok: true, result: await handler(parsed.data) };
  } catch (err) {
    if (err instanceof CommandError)
      return { ok: false, error: { code: err.code, message: err.message } };
    if (err instanceof ApiError)
      return { ok: false, error: { code: `service_${err.status}`, message: err.message } };
    return {
      ok: false,
      error: { code: 'internal', message: err instanceof Error ? err.message : String(err) },
    };
  }
}
