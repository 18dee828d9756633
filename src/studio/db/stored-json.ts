/**
 * Reading the JSON the studio keeps in its columns (recipes, failed shots, compliance reports):
 * what comes back from disk is checked here, not cast where it is used.
 */
import { z } from 'zod';
import {
  RecipeSchema,
  StoredComplianceReportSchema,
  type Recipe,
  type StoredComplianceReport,
} from '../../shared/studio';

/**
 * An item's recipe snapshot. It was validated when the photo was queued and is kept exactly as
 * written then (a later schema must not change what an old photo was queued with).
 */
export function readRecipeSnapshot(text: string): Recipe {
  return JSON.parse(text) as Recipe;
}

/** A folder's current recipe, validated (and its defaults filled) on every read. */
export function parseFolderRecipe(text: string): Recipe {
  return RecipeSchema.parse(JSON.parse(text));
}

const ShotIdsSchema = z.array(z.string());

/** The ids of a ready shoot's failed shots (none when the column is empty). */
export function readFailedShots(text: string | null): string[] {
  return text ? ShotIdsSchema.parse(JSON.parse(text)) : [];
}

/**
 * An export's compliance report as stored by any version, or null when there is none or it is
 * unreadable (the result then shows as unchecked). Fields newer than the stored shape are kept.
 */
export function readComplianceReport(text: string | null): StoredComplianceReport | null {
  if (!text) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  return StoredComplianceReportSchema.safeParse(json).success
    ? (json as StoredComplianceReport)
    : null;
}
