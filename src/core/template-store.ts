/** Saved template sets ("looks"), scoped to their account. Thin queries only. */
import type { ReadableDB, WritableDB } from './db/types';
import type { TemplateSetEntry, ToolId } from '../shared/api';
import type { TemplateStyling } from './generation-request';

type Row = {
  id: string; label: string; toolId: ToolId; images: string; pose: string | null; shotType: string | null;
  stylePreset: string | null; ratio: string | null; coverUrl: string | null; createdAt: string;
};
const COLUMNS = `id, label, tool_id AS toolId, images, pose, shot_type AS shotType, style_preset AS stylePreset,
  ratio, cover_url AS coverUrl, created_at AS createdAt`;

const toEntry = (row: Row): TemplateSetEntry => ({ ...row, images: JSON.parse(row.images) as Record<string, string> });

export function insert(
  db: WritableDB,
  t: Omit<TemplateStyling, 'id'> & { id: string; accountId: string; label: string; coverUrl: string | null; sourceJobId: string | null },
  now: Date,
): void {
  db.prepare(
    `INSERT INTO template_sets (id, account_id, label, tool_id, images, pose, shot_type, style_preset, ratio, cover_url, source_job_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(t.id, t.accountId, t.label, t.toolId, JSON.stringify(t.images), t.pose, t.shotType, t.stylePreset, t.ratio, t.coverUrl, t.sourceJobId, now.toISOString());
}

export function get(db: ReadableDB, accountId: string, id: string): TemplateStyling | undefined {
  const row = db.prepare(`SELECT ${COLUMNS} FROM template_sets WHERE id = ? AND account_id = ?`).get(id, accountId) as Row | undefined;
  return row && toEntry(row);
}

export function list(db: ReadableDB, accountId: string): TemplateSetEntry[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM template_sets WHERE account_id = ? ORDER BY created_at DESC, id`).all(accountId) as Row[]).map(toEntry);
}

export function remove(db: WritableDB, accountId: string, id: string): boolean {
  return db.prepare('DELETE FROM template_sets WHERE id = ? AND account_id = ?').run(id, accountId).changes === 1;
}
