/**
 * Which catalog entries a new recipe starts with. The catalog is the service's (embedded or
 * remote), so ids come from it once it is loaded; the one fallback id below is only for the first
 * paint of the add-folder form, before the catalog arrives (the embedded catalog's first model).
 */
import type { CatalogView } from '../../../shared/studio';

export const FALLBACK_FASHION_MODEL_ID = 'fm_amara';

/** The fallback model when the catalog offers it (or nothing is known yet), else its first model. */
export function defaultFashionModelId(catalog: CatalogView | null): string {
  const models = catalog?.fashionModels ?? [];
  if (models.length === 0 || models.some((m) => m.id === FALLBACK_FASHION_MODEL_ID))
    return FALLBACK_FASHION_MODEL_ID;
  return models[0]!.id;
}

/** The first ready shoot the service lists ('' until the catalog is loaded: the form says not ready). */
export function defaultReadyShootId(catalog: CatalogView | null): string {
  return catalog?.readyShoots[0]?.id ?? '';
}
