/**
 * A template set as both stores keep it: every field in a column, `images` as JSON text. One
 * mapper, so SQLite and PostgreSQL read it back the same way.
 */
import type { TemplateSetRow } from './types';

export type StoredTemplateSet = Omit<TemplateSetRow, 'images'> & { images: string };

export const templateSetFromStored = (stored: StoredTemplateSet): TemplateSetRow => ({
  ...stored,
  images: JSON.parse(stored.images) as TemplateSetRow['images'],
});
