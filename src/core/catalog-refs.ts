/** How requests name catalog entries (fashion models, venues, poses), resolved against the loaded catalog. */
import type { Catalog } from './catalog';
import { BadRequest } from './errors';
import { catalogImage, type ImageResolver, type StoredImage } from './media/resolve';
import type { StoredUnit } from './jobs/job-input';

type Entity = 'fashion_model' | 'venue';
const entriesOf = (catalog: Catalog, field: string) =>
  field === 'fashion_model' ? catalog.fashionModels : field === 'venue' ? catalog.venues : [];

/** The catalog id a request's image reference names, or null for a URL or an upload. */
export function catalogIdOf(catalog: Catalog, field: Entity, ref: unknown): string | null {
  if (typeof ref !== 'string') return null;
  return entriesOf(catalog, field).some((e) => e.id === ref) ? ref : null;
}

/** The image of a catalog entry a ready template set names (missing means the catalog is broken). */
export function catalogFileOf(catalog: Catalog, field: Entity, id: string): StoredImage {
  const entry = entriesOf(catalog, field).find((e) => e.id === id);
  if (!entry) throw new Error(`catalog ${field} ${id} is missing`);
  return catalogImage(entry.file);
}

/** A pose by id, or 400 naming the endpoint that lists them. */
export function poseOf(catalog: Catalog, id: string): NonNullable<StoredUnit['pose']> {
  const pose = catalog.poses.find((p) => p.id === id);
  if (!pose) throw new BadRequest(`Unknown pose '${id}'; GET /v1/poses lists the valid ones`);
  return { id: pose.id, type: pose.type, image: catalogImage(pose.file) };
}

/** A saved reference as a URL: catalog ids become their public image URL, URLs stay as given. */
export function imageUrlOf(
  catalog: Catalog,
  resolver: ImageResolver,
  field: string,
  ref: string,
): string {
  const entry = entriesOf(catalog, field).find((e) => e.id === ref);
  return entry ? resolver.catalogUrl(entry.file) : ref;
}
