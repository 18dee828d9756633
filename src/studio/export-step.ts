/**
 * Exports an item's approved results to its batch's output folder (mirroring the source
 * subfolder), records each exported path with its compliance report, and skips results already
 * exported; a repeat after a crash adopts files it already wrote instead of writing copies.
 */
import path from 'node:path';
import { jobGroup, type Recipe } from '../shared/studio';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import type { Library } from './library';
import { exportResult } from './export/export-result';

export async function exportApproved(input: {
  db: StudioDB;
  library: Library;
  item: store.ItemRow;
  recipe: Recipe;
  outputDir: string;
  now: Date;
  onResult: (row: store.ResultRow) => void;
}): Promise<number> {
  const { db, item, recipe } = input;
  let exported = 0;
  // Mirror the source subfolder unless the naming pattern places files by {folder} itself.
  const outputDir = recipe.export.naming.includes('{folder}')
    ? input.outputDir
    : path.join(input.outputDir, item.relativeDir);
  for (const result of store.resultsOf(db, item.id)) {
    if (result.review !== 'approved' || result.exportedPath) continue;
    const out = await exportResult({
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
      adoptIdentical: true,
    });
    store.setExported(db, result.id, out.path, out.report);
    const row = store.getResult(db, result.id);
    if (row) input.onResult(row);
    exported++;
  }
  return exported;
}
