/** Why a recipe cannot run, in the form's own words. */
import type { GenerationRequest, ToolId } from '../../../shared/api';
import { validateGeneration } from '../../../shared/generation-rules';
import { recipeKind, RecipeSchema, type RecipeInput } from '../../../shared/studio';
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

/** Why a recipe cannot run, in words (with the form's own field names), or null. */
export function recipeProblem(recipe: RecipeInput): string | null {
  const parsed = RecipeSchema.safeParse(recipe);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `${issue.path.join('.') || 'recipe'}: ${issue.message}`;
  }
  const request = parsed.data.request as EditableRequest;
  if (recipeKind(request) !== 'tool') return null;
  try {
    validateGeneration(request as GenerationRequest);
    return null;
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
