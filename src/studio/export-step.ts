/**
 * Exports an item's approved results to its batch's output folder (mirroring the source
 * subfolder), records each exported path with its compliance report, and skips results already
 * exported; a repeat after a crash adopts files it already wrote instead of writing copies.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { jobGroup, type Recipe } from '../shared/studio';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import type { Library } from './library';
import { exportResult, type ExportResultOutput } from './export/export-result';

type ExportInput = {
  db: StudioDB;
  library: Library;
  item: store.ItemRow;
  recipe: Recipe;
  outputDir: string;
  now: Date;
  onResult: (row: store.ResultRow) => void;
};

/**
 * Why an approved result of the item cannot be exported, in words (its file gone from the studio
 * library, or unreadable); null when every one can. Nothing is written or removed to find out.
 */
export async function unexportableReason(
  library: Library,
  results: readonly store.ResultRow[],
): Promise<string | null> {
  for (const result of results) {
    if (result.review !== 'approved') continue;
    const file = library.absolute(result.file);
    try {
      await fs.access(file, fs.constants.R_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const what = code === 'ENOENT' ? 'no longer in the studio library' : 'not readable';
      return `its paid result ${result.n + 1} is ${what} (${file})`;
    }
  }
  return null;
}

/** Writes one approved result under the recipe's export settings (not yet recorded). */
function exportOne(
  input: ExportInput,
  result: store.ResultRow,
  adoptIdentical: boolean,
): Promise<ExportResultOutput> {
  const { item, recipe } = input;
  // Mirror the source subfolder unless the naming pattern places files by {folder} itself.
  const outputDir = recipe.export.naming.includes('{folder}')
    ? input.outputDir
    : path.join(input.outputDir, item.relativeDir);
  return exportResult({
    resultPath: input.library.absolute(result.file),
    resultMime: result.mime,
    sourceName: item.name,
    sourceFolder: item.relativeDir,
    tool: jobGroup(item.kind, item.toolId),
    shot: result.shotId ?? String(result.n + 1),
    n: result.n + 1,
    date: input.now,
    outputDir,
    export: recipe.export,
    conflict: 'suffix',
    adoptIdentical,
  });
}

function record(input: ExportInput, resultId: string, out: ExportResultOutput): void {
  store.setExported(input.db, resultId, out.path, out.report);
  const row = store.getResult(input.db, resultId);
  if (row) input.onResult(row);
}

export async function exportApproved(input: ExportInput): Promise<number> {
  const results = store.resultsOf(input.db, input.item.id);
  const pending = results.filter((r) => r.review === 'approved' && !r.exportedPath);
  // Said in words, not as the raw ENOENT of the read: the operator can act on it.
  const unexportable = await unexportableReason(input.library, pending);
  if (unexportable)
    throw new Error(
      `${unexportable}: it cannot be exported; the job stays paid, and Redo makes the photo again (paid)`,
    );
  let exported = 0;
  for (const result of pending) {
    record(input, result.id, await exportOne(input, result, true));
    exported++;
  }
  return exported;
}

/**
 * A hidden name beside an exported file, where it waits while its replacement is written. Not the
 * atomic write's temp name (`.tmp`): the first write into a folder sweeps those away.
 */
const asidePath = (file: string) =>
  path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.kept`);

/**
 * Writes an exported item's approved results again (new export settings), never losing the
 * earlier files: each is set aside (so the new one may take its name), the new ones are written,
 * and only then are the earlier ones removed. When any write fails, the new files are removed,
 * the earlier ones put back and the records left as they were; the error says so in words.
 */
export async function exportApprovedAgain(input: ExportInput): Promise<void> {
  const approved = store.resultsOf(input.db, input.item.id).filter((r) => r.review === 'approved');
  const unexportable = await unexportableReason(input.library, approved);
  if (unexportable) throw new Error(unexportable);
  const aside: { file: string; kept: string }[] = [];
  const written: { resultId: string; out: ExportResultOutput }[] = [];
  try {
    for (const result of approved) {
      if (!result.exportedPath) continue;
      const kept = asidePath(result.exportedPath);
      try {
        await fs.rename(result.exportedPath, kept);
      } catch (error) {
        // Already gone from the output folder (removed by hand): nothing to keep.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      aside.push({ file: result.exportedPath, kept });
    }
    // Not adopting identical files: a file found there may be another photo's, not ours to remove.
    for (const result of approved)
      written.push({ resultId: result.id, out: await exportOne(input, result, false) });
  } catch (error) {
    for (const { out } of written) await fs.rm(out.path, { force: true });
    for (const { file, kept } of aside) await fs.rename(kept, file);
    throw new Error(`could not write it again: ${writeTrouble(error)}`, { cause: error });
  }
  for (const { resultId, out } of written) record(input, resultId, out);
  for (const { kept } of aside) await fs.rm(kept, { force: true });
}

/** What stopped a write, in words; the system's own message follows for whoever looks closer. */
function writeTrouble(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const words =
    code === 'EACCES' || code === 'EPERM'
      ? 'the output folder is not writable'
      : code === 'EROFS'
        ? 'the output disk is read-only'
        : code === 'ENOTDIR' || code === 'EEXIST'
          ? 'a file stands where the naming pattern needs a folder'
          : code === 'ENOENT'
            ? 'the output folder is gone'
            : null;
  // ENOSPC/EDQUOT come worded already from the export itself.
  return words ? `${words} (${message})` : message;
}
