/**
 * A recipe's request as the builder edits it: which kind it is, where the dropped photo goes, a
 * tool's request with its required fields filled, and the price per photo.
 */
import { getTool, CATALOG_SHOT_PRICE, type ToolSpec } from '../../../shared/tools';
import {
  jobGroup,
  PHOTO_PLACEHOLDER,
  recipeKind,
  type CatalogView,
  type ExportSettings,
  type LookView,
  type RecipeInput,
} from '../../../shared/studio';
import type { ToolId } from '../../../shared/api';
import { defaultFashionModelId, FALLBACK_FASHION_MODEL_ID } from './catalog-defaults';

export type EditableRequest = Record<string, unknown> & {
  images?: Record<string, string | string[]>;
};

/** The naming pattern a ready shoot starts with: one file per shot, named by the shot. */
export const READY_SHOOT_NAMING = '{name}-{shot}-{n}';

export const DEFAULT_RECIPE: RecipeInput = {
  request: {
    toolId: 'virtual_model',
    images: { garment_photo: PHOTO_PLACEHOLDER, fashion_model: FALLBACK_FASHION_MODEL_ID },
    ratio: '4:5',
  },
  export: { preset: 'original', format: 'jpeg', quality: 90, naming: '{name}-{tool}-{n}' },
};

export const DEFAULT_EXPORT = DEFAULT_RECIPE.export as ExportSettings;

/**
 * The default recipe with the loaded catalog's model: DEFAULT_RECIPE's fallback id is the embedded
 * catalog's, which a remote service need not list (its every request would then be refused).
 */
export function defaultRecipeFor(catalog: CatalogView): RecipeInput {
  const request = DEFAULT_RECIPE.request as EditableRequest;
  return {
    ...DEFAULT_RECIPE,
    request: {
      ...request,
      images: { ...request.images, fashion_model: defaultFashionModelId(catalog) },
    } as RecipeInput['request'],
  };
}

/** The image field a dropped photo goes into for a tool. */
export function photoField(toolId: ToolId): { key: string; array: boolean } {
  const tool = getTool(toolId);
  const requirement = tool.required.find((r) => r.field !== 'fashion_model') ?? tool.required[0]!;
  const key = requirement.oneOf[0]!;
  return { key, array: tool.arrayKeys.includes(key) };
}

/** The images of a request that only holds the dropped photo. */
export function photoOnly(toolId: ToolId): Record<string, string | string[]> {
  const photo = photoField(toolId);
  return { [photo.key]: photo.array ? [PHOTO_PLACEHOLDER] : PHOTO_PLACEHOLDER };
}

/** Values a tool's required fields start with, so a new request is valid as chosen. */
const REQUIRED_FIELD_DEFAULTS: Partial<Record<ToolSpec['requiredFields'][number], string>> = {
  shotType: 'full_body',
  stylePreset: 'catalog',
  jewelryType: 'ring',
  motionPrompt: 'slow zoom in',
};

/** A request for `toolId`, keeping what of `previous` still applies (model, venue, fields). */
export function requestForTool(
  toolId: ToolId,
  previous: EditableRequest,
  fashionModelId: string,
): EditableRequest {
  const tool = getTool(toolId);
  const images = photoOnly(toolId);
  const kept = previous.images ?? {};
  for (const key of ['fashion_model', 'venue']) {
    const value = kept[key];
    if (tool.imageKeys.includes(key) && typeof value === 'string') images[key] = value;
  }
  if (tool.required.some((r) => r.field === 'fashion_model') && !images.fashion_model)
    images.fashion_model = fashionModelId;
  const request: EditableRequest = { toolId, images };
  for (const field of tool.fields)
    if (field !== 'images' && previous[field] !== undefined) request[field] = previous[field];
  for (const field of tool.requiredFields) {
    const fallback = REQUIRED_FIELD_DEFAULTS[field];
    if (fallback !== undefined) (request as Record<string, unknown>)[field] ??= fallback;
  }
  if (toolId === 'photo_reframe') request.targetRatio ??= '4:5';
  return request;
}

/** Diamonds per photo, or null when it cannot be told yet (no tool, unknown look). */
export function recipePrice(
  request: EditableRequest,
  catalog: CatalogView | null,
  looks: LookView[],
  tool: ToolSpec | null,
): number | null {
  const kind = recipeKind(request);
  if (kind === 'ready_shoot') {
    const readyShoot = catalog?.readyShoots.find((r) => r.id === request.readyTemplateSetId);
    return (
      CATALOG_SHOT_PRICE *
      (Array.isArray(request.shotIds) ? request.shotIds.length : (readyShoot?.shotCount ?? 0))
    );
  }
  if (kind === 'look') {
    const look = looks.find((l) => l.id === request.templateSetId);
    return look ? getTool(look.toolId).price : null;
  }
  return tool?.price ?? null;
}

/**
 * The `{tool}` token of file names for this request: its job group, with a look's tool when the
 * look is listed (the engine names a look's files by the tool its request names, else 'look').
 */
export function namingTool(
  request: EditableRequest,
  looks: LookView[],
  toolId: ToolId | null,
): string {
  const kind = recipeKind(request);
  const lookTool = looks.find((l) => l.id === request.templateSetId)?.toolId ?? null;
  return jobGroup(kind, kind === 'look' ? (toolId ?? lookTool) : toolId);
}
