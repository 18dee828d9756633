import type { NewTemplateSet, TemplateSetRepository, TemplateSetRow } from '../types';
import {
  TEMPLATE_SET_INSERT_COLUMNS,
  templateSetFromStored,
  templateSetParams,
  type StoredTemplateSet,
} from '../template-set-row';
import type { Executor } from './executor';

const COLUMNS = `id, label, tool_id AS "toolId", images, pose, shot_type AS "shotType", style_preset AS "stylePreset",
  ratio, cover_url AS "coverUrl", created_at AS "createdAt"`;

export class PgTemplateSets implements TemplateSetRepository {
  constructor(private readonly ex: Executor) {}

  async insert(t: NewTemplateSet): Promise<void> {
    await this.ex.query(
      `INSERT INTO template_sets (${TEMPLATE_SET_INSERT_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [...templateSetParams(t)],
    );
  }

  async get(accountId: string, id: string): Promise<TemplateSetRow | undefined> {
    const rows = await this.ex.query<StoredTemplateSet>(
      `SELECT ${COLUMNS} FROM template_sets WHERE id = $1 AND account_id = $2`,
      [id, accountId],
    );
    return rows[0] && templateSetFromStored(rows[0]);
  }

  async list(accountId: string): Promise<TemplateSetRow[]> {
    const rows = await this.ex.query<StoredTemplateSet>(
      `SELECT ${COLUMNS} FROM template_sets WHERE account_id = $1 ORDER BY created_at DESC, id`,
      [accountId],
    );
    return rows.map(templateSetFromStored);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const rows = await this.ex.query(
      'DELETE FROM template_sets WHERE id = $1 AND account_id = $2 RETURNING 1',
      [id, accountId],
    );
    return rows.length === 1;
  }
}
