/**
 * Rows of the studio database as the studio contract shows them (ItemView, ResultView,
 * FolderView): renamed fields, flags as booleans, stored JSON read through stored-json.ts, and
 * library paths `/`-separated whatever the platform.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FolderView, ItemView, ResultView } from '../../shared/studio';
import type { StudioDB } from './open';
import {
  batchSpent,
  batchUncertain,
  folderBatch,
  type FolderRow,
  type ItemRow,
  type ResultRow,
} from './queries';
import {
  parseFolderRecipe,
  readComplianceReport,
  readFailedShots,
  readRecipeSnapshot,
} from './stored-json';

export function itemView(row: ItemRow): ItemView {
  return {
    id: row.id,
    batchId: row.batchId,
    folderId: row.folderId,
    name: row.name,
    relativeDir: row.relativeDir,
    sourcePath: row.sourcePath,
    sha256: row.sha256,
    state: row.state,
    waitReason: row.waitReason,
    waitUntil: row.waitUntil,
    error: row.error,
    note: row.note,
    failedShots: readFailedShots(row.failedShots),
    uncertain: row.uncertain === 1,
    maybeCharged:
      row.uncertain === 1 ||
      (row.state === 'submitting' &&
        row.submittedAt !== null &&
        row.jobId === null &&
        row.diamonds === 0),
    // Recorded by the hot folder with no recipe hash: no recipe was ever to be run on it.
    badFile: row.state === 'rejected' && row.recipeHash === '',
    kind: row.kind,
    toolId: row.toolId,
    recipe: readRecipeSnapshot(row.recipe),
    jobId: row.jobId,
    diamonds: row.diamonds,
    packTotal: row.packTotal,
    packCompleted: row.packCompleted,
    packFailed: row.packFailed,
    position: row.position,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function resultView(row: ResultRow): ResultView {
  return {
    id: row.id,
    itemId: row.itemId,
    shotId: row.shotId,
    n: row.n,
    mime: row.mime,
    sha256: row.sha256,
    review: row.review,
    exportedPath: row.exportedPath,
    compliance: readComplianceReport(row.compliance),
    file: row.file.split(path.sep).join('/'),
    thumb: row.thumb ? row.thumb.split(path.sep).join('/') : null,
    createdAt: row.createdAt,
  };
}

export function folderView(
  row: FolderRow,
  batch?: { ceiling: number | null; spent: number; uncertain: number },
): FolderView {
  return {
    id: row.id,
    path: row.path,
    outputDir: row.outputDir,
    recipe: parseFolderRecipe(row.recipe),
    paused: row.paused === 1,
    waitReason: row.waitReason,
    maxDiamonds: batch?.ceiling ?? null,
    diamondsSpent: batch?.spent ?? 0,
    diamondsUncertain: batch?.uncertain ?? 0,
    missing: !fs.existsSync(row.path),
  };
}

/** A folder as the UI sees it, with its batch's ceiling and spend. */
export function folderViewOf(db: StudioDB, row: FolderRow): FolderView {
  const batch = folderBatch(db, row.id);
  return folderView(
    row,
    batch
      ? {
          ceiling: batch.ceiling,
          spent: batchSpent(db, batch.id),
          uncertain: batchUncertain(db, batch.id),
        }
      : undefined,
  );
}
