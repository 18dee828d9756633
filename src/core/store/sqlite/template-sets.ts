import type { NewTemplateSet, TemplateSetRepository, TemplateSetRow } from '../types';
import { SqliteRepository } from './gate';

type Raw = Omit<TemplateSetRow, 'images'> & { images: string };
const COLUMNS = `id, label, tool_id AS toolId, images, pose, shot_type AS shotType, style_preset AS stylePreset,
  ratio, cover_url AS coverUrl, created_at AS createdAt`;
const toRow = (raw: Raw): TemplateSetRow => ({
  ...raw,
  images: JSON.parse(raw.images) as Record<string, string>,
});

export class SqliteTemplateSets extends SqliteRepository implements TemplateSetRepository {
  insert(t: NewTemplateSet): Promise<void> {
    return this.run((db) => {
      db.prepare(
        `INSERT INTO template_sets (id, account_id, label, tool_id, images, pose, shot_type, style_preset, ratio, cover_url, source_job_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        t.id,
        t.accountId,
        t.label,
        t.toolId,
        JSON.stringify(t.images),
        t.pose,
        t.shotType,
        t.stylePreset,
        t.ratio,
        t.coverUrl,
        t.sourceJobId,
        t.createdAt,
      );
    });
  }

  get(accountId: string, id: string): Promise<TemplateSetRow | undefined> {
    return this.run((db) => {
      const raw = db
        .prepare(`SELECT ${COLUMNS} FROM template_sets WHERE id = ? AND account_id = ?`)
        .get(id, accountId) as Raw | undefined;
      return raw && toRow(raw);
    });
  }

  list(accountId: string): Promise<TemplateSetRow[]> {
    return this.run((db) =>
      (
        db
          .prepare(
            `SELECT ${COLUMNS} FROM template_sets WHERE account_id = ? ORDER BY created_at DESC, id`,
          )
          .all(accountId) as Raw[]
      ).map(toRow),
    );
  }

  delete(accountId: string, id: string): Promise<boolean> {
    return this.run(
      (db) =>
        db.prepare('DELETE FROM template_sets WHERE id = ? AND account_id = ?').run(id, accountId)
          .changes === 1,
    );
  }
}
