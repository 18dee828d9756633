/**
 * Export is per destination. A photo whose recipe was already paid for and exported is exported
 * again, for nothing, to a folder that does not hold its files (another `--out`, or the same one
 * after they were deleted): the new item takes copies of the paid results (same library files)
 * and goes straight to exporting. It is skipped only when its files are in that folder already,
 * and then it says so, with the date they were written.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { StudioDB } from '../db/open';
import * as store from '../db/store';

type Exported = { item: store.ItemRow; files: string[] };

/** Items of the same photo and recipe that were exported, with the files they wrote. */
function exportedTwins(db: StudioDB, item: store.ItemRow): Exported[] {
  const rows = db
    .prepare(
      `SELECT id FROM items WHERE sha256 = ? AND recipe_hash = ? AND state = 'exported' AND id != ? ORDER BY created_at`,
    )
    .all(item.sha256, item.recipeHash, item.id) as { id: string }[];
  return rows.flatMap(({ id }) => {
    const twin = store.getItem(db, id);
    if (!twin) return [];
    const files = store
      .resultsOf(db, id)
      .flatMap((r) => (r.review === 'approved' && r.exportedPath ? [r.exportedPath] : []));
    return [{ item: twin, files }];
  });
}

function inside(folder: string, file: string): boolean {
  const rel = path.relative(folder, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** "2026-11-23 14:05 UTC" */
function when(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * For an item `enqueue` recorded as skipped because the same photo and recipe were exported
 * before: keeps it skipped, with the reason and date, when that export's files are all in
 * `outputDir`; otherwise turns it into a re-export of the paid results. Returns the new state.
 */
export function exportAgainIfMissing(
  db: StudioDB,
  itemId: string,
  outputDir: string,
  now: Date,
): 'skipped' | 'exporting' | null {
  const item = store.getItem(db, itemId);
  if (!item || item.state !== 'skipped') return null;
  const twins = exportedTwins(db, item);
  if (twins.length === 0) return null; // skipped for another reason (already queued, say)
  return db
    .transaction((): 'skipped' | 'exporting' => {
      const here = twins.find(
        (t) => t.files.length > 0 && t.files.every((f) => inside(outputDir, f) && fs.existsSync(f)),
      );
      if (here) {
        const writtenAt = new Date(Math.max(...here.files.map((f) => fs.statSync(f).mtimeMs)));
        const shown = here.files.map((f) => path.relative(outputDir, f)).join(', ');
        store.updateItem(
          db,
          item.id,
          {
            note: `already exported to ${outputDir} on ${when(writtenAt)} (${shown}); nothing spent`,
          },
          now,
        );
        return 'skipped';
      }
      // The paid results, from the first export that has them (the library keeps the files).
      const source = twins.find((t) => store.resultsOf(db, t.item.id).length > 0)!;
      for (const r of store.resultsOf(db, source.item.id)) {
        const id = `res_${createHash('sha256').update(`${item.id}:${r.n}`).digest('hex').slice(0, 24)}`;
        store.insertResult(db, {
          id,
          itemId: item.id,
          n: r.n,
          shotId: r.shotId,
          sha256: r.sha256,
          mime: r.mime,
          file: r.file,
          thumb: r.thumb,
          createdAt: now.toISOString(),
        });
        store.setReview(db, id, 'approved');
      }
      // The job travels with its results: a retry of this item collects it again, never pays again.
      db.prepare(
        'UPDATE items SET job_id = ?, result_urls = ?, shot_map = ?, pack_total = ? WHERE id = ?',
      ).run(
        source.item.jobId,
        source.item.resultUrls,
        source.item.shotMap,
        source.item.packTotal,
        item.id,
      );
      const from =
        source.files.length > 0 ? ` (exported before to ${path.dirname(source.files[0]!)})` : '';
      store.updateItem(
        db,
        item.id,
        {
          state: 'exporting',
          note: `paid result of ${source.item.name}${from} exported again to ${outputDir}; nothing spent`,
        },
        now,
      );
      return 'exporting';
    })
    .immediate();
}
