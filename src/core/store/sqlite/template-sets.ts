import type { NewTemplateSet, TemplateSetRepository, TemplateSetRow } from '../types';
import {
  TEMPLATE_SET_INSERT_COLUMNS,
  templateSetFromStored,
  templateSetParams,
  type StoredTemplateSet,
} from '../template-set-row';
import { SqliteRepository } from './gate';

const COLUMNS = `id, label, tool_id AS toolId, images, pose, shot_type AS shotType, style_preset AS stylePreset,
  ratio, cover_url AS coverUrl, created_at AS createdAt`;

export class SqliteTemplateSets extends SqliteRepository implements TemplateSetRepository {
  insert(t: NewTemplateSet): Promise<void> {
    return this.run((db) => {
      db.prepare(
        `INSERT INTO template_sets (${TEMPLATE_SET_INSERT_COLUMNS})
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(...templateSetParams(t));
    });
  }

  get(accountId: string, id: string): Promise<TemplateSetRow | undefined> {
    return this.run((db) => {
      const raw = db
        .prepare(`SELECT ${COLUMNS} FROM template_sets WHERE id = ? AND account_id = ?`)
        .get(id, accountId) as StoredTemplateSet | undefined;
      return raw && templateSetFromStored(raw);
    });
  }

  list(accountId: string): Promise<TemplateSetRow[]> {
    return this.run((db) =>
      (
        db
          .prepare(
            `SELECT ${COLUMNS} FROM template_sets WHERE account_id = ? ORDER BY created_at DESC, id`,
          )
          .all(accountId) as StoredTemplateSet[]
      ).map(templateSetFromStored),
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
