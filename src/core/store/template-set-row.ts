/**
 * A template set as both stores keep it: every field in a column, `images` as JSON text. One
 * mapper, so SQLite and PostgreSQL read it back the same way.
 */
import type { NewTemplateSet, TemplateSetRow } from './types';

export type StoredTemplateSet = Omit<TemplateSetRow, 'images'> & { images: string };

export const templateSetFromStored = (stored: StoredTemplateSet): TemplateSetRow => ({
  ...stored,
  images: JSON.parse(stored.images) as TemplateSetRow['images'],
});

/** The columns `templateSetParams` fills, in its order. */
export const TEMPLATE_SET_INSERT_COLUMNS =
  'id, account_id, label, tool_id, images, pose, shot_type, style_preset, ratio, cover_url, source_job_id, created_at';

export const templateSetParams = (t: NewTemplateSet): unknown[] => [
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
];
