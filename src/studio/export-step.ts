/**
 * Exports an item's approved results to its batch's output folder (mirroring the source
 * subfolder), records each exported path with its compliance report, and skips results already
 * exported, so the step can be repeated after a crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Recipe } from '../shared/studio';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import type { Library } from './library';
import { exportResult } from './export/export-result';
import { renderName } from './export/naming';
import { moveNoClobber } from './export/source-files';

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
  const tool = item.toolId;
  // Mirror the source subfolder unless the naming pattern places files by {folder} itself.
  const outputDir = recipe.export.naming.includes('{folder}') ? input.outputDir : path.join(input.outputDir, item.relativeDir);
  for (const result of store.resultsOf(db, item.id)) {
    if (result.review !== 'approved' || result.exportedPath) continue;
    const values = { name: item.name, folder: item.relativeDir, tool, shot: result.shotId ?? String(result.n + 1), n: result.n + 1, date: input.now };
    let exportedPath: string;
    let report = null;
    if (result.mime.startsWith('image/')) {
      const out = await exportResult({ resultPath: input.library.absolute(result.file), sourceName: item.name, sourceFolder: item.relativeDir, tool, shot: values.shot, n: values.n, date: input.now, outputDir, export: recipe.export, conflict: 'suffix' });
      exportedPath = out.path;
      report = out.report;
    } else {
      // Videos are delivered as they are: marketplace presets apply to stills.
      const relative = renderName(recipe.export.naming, { ...values, ext: 'mp4' });
      const temp = path.join(outputDir, `.${result.id}.tmp`);
      await fs.promises.mkdir(outputDir, { recursive: true });
      await fs.promises.copyFile(input.library.absolute(result.file), temp);
      exportedPath = await moveNoClobber(temp, path.join(outputDir, ...relative.split('/')));
    }
    store.setExported(db, result.id, exportedPath, report);
    const row = store.getResult(db, result.id);
    if (row) input.onResult(row);
    exported++;
  }
  return exported;
}
