/** What the operator reads instead of ids and raw messages: folder and recipe names, prices, errors. */
import type { CatalogView, ItemView, LookView, RecipeInput } from '../../shared/studio';
import { CATALOG_SHOT_PRICE, getTool, isToolId } from '../../shared/tools';

/** The last segment of a folder path (`/Volumes/Studio/incoming` -> `incoming`). */
export function folderName(path: string): string {
  const parts = path.split(/[\\/]+/).filter(Boolean);
  return parts.at(-1) ?? path;
}

/** "Virtual model", "Clothing ecom pack": a tool id said as words. */
export const toolName = (toolId: string) => {
  const words = toolId.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** "Virtual model", "Ready shoot: Studio basics (2 of 4 shots)", "Look: Summer linen". */
export function recipeName(
  recipe: RecipeInput,
  catalog: CatalogView | null,
  looks: LookView[],
): string {
  const request = recipe.request as Record<string, unknown>;
  if (typeof request.readyTemplateSetId === 'string') {
    const set = catalog?.readyShoots.find((r) => r.id === request.readyTemplateSetId);
    const chosen = Array.isArray(request.shotIds) ? request.shotIds.length : null;
    if (!set) return 'Ready shoot';
    return `Ready shoot: ${set.name} (${chosen !== null ? `${chosen} of ${set.shotCount}` : set.shotCount} shots)`;
  }
  if (typeof request.templateSetId === 'string') {
    const look = looks.find((l) => l.id === request.templateSetId);
    return `Look: ${look?.label ?? 'a look'}`;
  }
  return toolName(String(request.toolId ?? 'tool'));
}

/** Diamonds one photo costs with this recipe, or null while the catalog is not known. */
export function recipePrice(
  recipe: RecipeInput,
  catalog: CatalogView | null,
  looks: LookView[],
): number | null {
  const request = recipe.request as Record<string, unknown>;
  if (typeof request.readyTemplateSetId === 'string') {
    if (Array.isArray(request.shotIds)) return CATALOG_SHOT_PRICE * request.shotIds.length;
    const set = catalog?.readyShoots.find((r) => r.id === request.readyTemplateSetId);
    return set ? CATALOG_SHOT_PRICE * set.shotCount : null;
  }
  if (typeof request.templateSetId === 'string') {
    const look = looks.find((l) => l.id === request.templateSetId);
    return look ? getTool(look.toolId).price : null;
  }
  const toolId = String(request.toolId ?? '');
  return isToolId(toolId) ? getTool(toolId).price : null;
}

/** What an item costs: its charge once charged, its recipe's price before. */
export function itemPrice(
  item: ItemView,
  catalog: CatalogView | null,
  looks: LookView[],
): number | null {
  if (item.diamonds > 0 || item.jobId) return item.diamonds;
  return recipePrice(item.recipe, catalog, looks);
}

/**
 * A message fit to read: validation dumps (`[{"code":…,"path":["naming"],"message":…}]`) become
 * "naming: …" sentences; everything else gets a capital letter and a full stop.
 */
export function sentence(message: string | null): string {
  if (!message) return '';
  let text = message.trim();
  if (text.startsWith('[') || text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      const issues = (Array.isArray(parsed) ? parsed : [parsed]) as {
        path?: unknown[];
        message?: string;
      }[];
      text = issues
        .map((i) => `${i.path?.length ? `${i.path.join('.')}: ` : ''}${i.message ?? ''}`)
        .join('; ');
    } catch {
      // not JSON after all
    }
  }
  text = systemError(text) ?? text;
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?)]$/.test(text) ? text : `${text}.`;
}

/** Node's file-system errors (`EEXIST: file already exists, mkdir '/out'`) said as what happened. */
function systemError(text: string): string | null {
  const match = /^(E[A-Z]+): [^,]*(?:, (\w+) '([^']*)')?/.exec(text);
  if (!match) return null;
  const [, code, operation, target = 'the file'] = match;
  if (code === 'EEXIST' && operation === 'mkdir')
    return `Cannot create the output folder ${target}: a file of that name is in the way. Move it, then export again`;
  if (code === 'ENOTDIR')
    return `Cannot write into ${target}: part of that path is a file, not a folder. Fix the output folder, then export again`;
  if (code === 'EACCES' || code === 'EPERM')
    return `No permission to write ${target}. Fix the folder's permissions, then export again`;
  if (code === 'ENOSPC')
    return `The disk is full while writing ${target}. Free some space, then export again`;
  if (code === 'ENOENT') return `${target} is missing (moved or deleted)`;
  return null;
}

/** "1 photo", "3 photos". */
export const photoCount = (n: number): string => `${n} photo${n === 1 ? '' : 's'}`;

/** "1 diamond", "12 diamonds". */
export const diamondCount = (n: number): string => `${n} diamond${n === 1 ? '' : 's'}`;
