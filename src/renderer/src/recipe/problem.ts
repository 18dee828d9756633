/** Why a recipe cannot run, in the form's own words. */
import type { GenerationRequest, ToolId } from '../../../shared/api';
import { validateGeneration } from '../../../shared/generation-rules';
import {
  PHOTO_PLACEHOLDER,
  recipeKind,
  RecipeSchema,
  type CatalogView,
  type RecipeInput,
} from '../../../shared/studio';
import { getTool } from '../../../shared/tools';
import type { EditableRequest } from './request';

/** The names the form shows, for messages about request fields. */
const FIELD_LABELS: Record<string, string> = {
  customPrompt: 'Instructions',
  motionPrompt: 'Camera motion',
  targetRatio: 'Target ratio',
  backgroundColor: 'Background',
  shotType: 'Shot type',
  stylePreset: 'Style',
  jewelryType: 'Jewelry type',
  fashion_model: 'Fashion model',
};

/** A required text field, e.g. photo_edit's instructions: the recipe says so up front. */
export const isRequiredField = (toolId: ToolId | null, field: string) =>
  toolId ? getTool(toolId).requiredFields.includes(field as never) : false;

/** A direct image URL (the service also takes those for a model or venue), not a catalog id. */
const isUrl = (value: string) => /^[a-z][a-z0-9+.-]*:/i.test(value);

/**
 * A catalog id the request names that the service's catalog does not list, in words, or null.
 * The service refuses such a request for every photo (400, nothing charged but a request spent
 * each time), so the form says it before the recipe is saved. `catalog` null: not loaded yet.
 */
export function catalogProblem(
  request: EditableRequest,
  catalog: CatalogView | null,
): string | null {
  const kind = recipeKind(request);
  const images = request.images ?? {};
  const named: { label: string; id: string; listed: readonly { id: string }[] | undefined }[] = [];
  if (kind === 'tool') {
    for (const [key, label, listed] of [
      ['fashion_model', 'Fashion model', catalog?.fashionModels],
      ['venue', 'Venue', catalog?.venues],
    ] as const) {
      const value = images[key];
      if (typeof value === 'string' && value !== PHOTO_PLACEHOLDER && !isUrl(value))
        named.push({ label, id: value, listed });
    }
    if (typeof request.pose === 'string' && !isUrl(request.pose))
      named.push({ label: 'Pose', id: request.pose, listed: catalog?.poses });
  }
  if (kind === 'ready_shoot' && typeof request.readyTemplateSetId === 'string') {
    const shoot = catalog?.readyShoots.find((r) => r.id === request.readyTemplateSetId);
    named.push({
      label: 'Ready shoot',
      id: request.readyTemplateSetId,
      listed: catalog?.readyShoots,
    });
    if (shoot && Array.isArray(request.shotIds))
      for (const shot of request.shotIds)
        if (typeof shot === 'string') named.push({ label: 'Shot', id: shot, listed: shoot.shots });
  }
  if (named.length === 0) return null;
  if (!catalog)
    return 'the service’s catalog has not loaded yet, so its models and venues cannot be checked.';
  const unknown = named.find((n) => !n.listed?.some((entry) => entry.id === n.id));
  return unknown
    ? `${unknown.label} “${unknown.id}” is not in this service’s catalog (every photo would be refused): pick one it lists.`
    : null;
}

/**
 * Why a recipe cannot run, in words (with the form's own field names), or null. With `catalog`
 * (null while loading), the catalog ids it names are checked against the service's too.
 */
export function recipeProblem(recipe: RecipeInput, catalog?: CatalogView | null): string | null {
  const parsed = RecipeSchema.safeParse(recipe);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `${issue.path.join('.') || 'recipe'}: ${issue.message}`;
  }
  const request = parsed.data.request as EditableRequest;
  const unlisted = () => (catalog === undefined ? null : catalogProblem(request, catalog));
  if (recipeKind(request) !== 'tool') return unlisted();
  try {
    validateGeneration(request as GenerationRequest);
    return unlisted();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const missing = /missing required field '(\w+)'/.exec(message);
    if (missing)
      return `“${FIELD_LABELS[missing[1]!] ?? missing[1]}” is required for this tool: fill it in.`;
    return message.replace(/'(\w+)'/g, (whole, field: string) =>
      FIELD_LABELS[field] ? `“${FIELD_LABELS[field]}”` : whole,
    );
  }
}
