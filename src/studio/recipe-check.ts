/**
 * Checks a recipe before anything runs: the tool exists in the service's own table
 * (GET /v1/models), the request passes the spec's per-tool rules with a photo in place of
 * "{photo}", and ready shoots and shot ids exist. Returns the problem in words, or null.
 */
import type { ServiceClient } from '../client';
import { validateGeneration, RuleViolation } from '../shared/generation-rules';
import {
  fillPhoto,
  isReadyShootRecipe,
  mentionsPhoto,
  PHOTO_PLACEHOLDER,
  type Recipe,
} from '../shared/studio';
import { ApiError } from '../client';

const SAMPLE_URL = 'https://example.invalid/photo.jpg';

/**
 * `transientThrows`: a failure that waiting may cure (no answer, 429, 5xx) is thrown as the
 * ApiError instead of being returned as the recipe's problem (`run` retries it, then says so).
 */
export async function checkRecipe(
  client: ServiceClient,
  recipe: Recipe,
  options: { transientThrows?: boolean } = {},
): Promise<string | null> {
  const request = recipe.request;
  if (!mentionsPhoto(request.images))
    return `no image field is "${PHOTO_PLACEHOLDER}": say where each photo goes`;
  try {
    if (isReadyShootRecipe(request)) {
      const set = await client.getReadySet(request.readyTemplateSetId);
      const unknown = (request.shotIds ?? []).filter((id) => !set.shots.some((s) => s.id === id));
      return unknown.length ? `shots ${unknown.join(', ')} are not part of ${set.id}` : null;
    }
    if (request.templateSetId) return null; // the look supplies the rest; the service checks it
    const models = await client.listModels();
    if (!models.some((m) => m.id === request.toolId))
      return `unknown toolId '${request.toolId ?? ''}' (the service offers ${models.map((m) => m.id).join(', ')})`;
    validateGeneration({ ...request, images: fillPhoto(request.images, SAMPLE_URL) });
    return null;
  } catch (err) {
    if (options.transientThrows && err instanceof ApiError && err.retryable) throw err;
    if (err instanceof RuleViolation || err instanceof ApiError) return err.message;
    throw err;
  }
}
