/**
 * The embedded catalog shipped in resources/catalog: fashion models, venues, poses and ready
 * template sets, each with a real image the local provider composes with. Parsed with zod and
 * checked (every referenced id and file exists) at load, so a broken install fails loudly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const Slug = z.string().regex(/^[a-z0-9_-]+$/);
const File = z.string().regex(/^[a-z0-9_-]+\/[a-z0-9_.-]+\.(png|jpg|jpeg|webp)$/);
const Ratio = z.enum(['1:1', '4:5', '3:4', '9:16', '16:9']);

const FashionModelSchema = z.looseObject({
  id: Slug,
  name: z.string().min(1),
  gender: z.enum(['male', 'female']),
  file: File,
});
const VenueSchema = z.looseObject({
  id: Slug,
  name: z.string().min(1),
  category: z.string().min(1),
  file: File,
});
const PoseSchema = z.looseObject({
  id: Slug,
  name: z.string().min(1),
  type: z.enum(['default', 'ring', 'necklace', 'earring', 'bracelet']),
  file: File,
});
const ReadyShotSchema = z.object({
  id: Slug,
  name: z.string().min(1),
  pose: Slug,
  fashionModel: Slug,
  venue: Slug,
  ratio: Ratio,
});
const ReadySetSchema = z.object({
  id: Slug,
  name: z.string().min(1),
  category: z.string().min(1),
  cover: File,
  active: z.boolean(),
  shots: z.array(ReadyShotSchema).min(1),
});
const CatalogFileSchema = z.object({
  fashionModels: z.array(FashionModelSchema),
  venues: z.array(VenueSchema),
  poses: z.array(PoseSchema),
  readySets: z.array(ReadySetSchema),
});

export type CatalogFashionModel = z.infer<typeof FashionModelSchema>;
export type CatalogVenue = z.infer<typeof VenueSchema>;
export type CatalogPose = z.infer<typeof PoseSchema>;
export type CatalogReadyShot = z.infer<typeof ReadyShotSchema>;
export type CatalogReadySet = z.infer<typeof ReadySetSchema>;
export type Catalog = {
  fashionModels: readonly CatalogFashionModel[];
  venues: readonly CatalogVenue[];
  poses: readonly CatalogPose[];
  readySets: readonly CatalogReadySet[];
  /** Absolute path of a catalog asset (`file` values are relative to resources/catalog). */
  filePath(file: string): string;
};

export class CatalogError extends Error {
  override name = 'CatalogError';
}

/** resources/catalog next to the sources, or `$DROPSHOOT_RESOURCES/catalog` (packaged app). */
export function defaultCatalogDir(): string {
  if (process.env.DROPSHOOT_RESOURCES) return path.join(process.env.DROPSHOOT_RESOURCES, 'catalog');
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../resources/catalog');
}

export function loadCatalog(dir = defaultCatalogDir()): Catalog {
  const file = path.join(dir, 'catalog.json');
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CatalogError(
      `cannot read the catalog at ${file}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const parsed = CatalogFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CatalogError(
      `${file}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}`,
    );
  }
  const data = parsed.data;
  const ids = (list: readonly { id: string }[]) => new Set(list.map((e) => e.id));
  const models = ids(data.fashionModels);
  const venues = ids(data.venues);
  const poses = ids(data.poses);
  for (const list of [data.fashionModels, data.venues, data.poses, data.readySets] as const) {
    if (ids(list).size !== list.length) throw new CatalogError(`${file}: duplicate ids`);
  }
  const files = [...data.fashionModels, ...data.venues, ...data.poses]
    .map((e) => e.file)
    .concat(data.readySets.map((s) => s.cover));
  for (const asset of files) {
    if (!fs.existsSync(path.join(dir, asset)))
      throw new CatalogError(`${file}: missing asset ${asset}`);
  }
  for (const set of data.readySets) {
    for (const shot of set.shots) {
      if (!models.has(shot.fashionModel) || !venues.has(shot.venue) || !poses.has(shot.pose)) {
        throw new CatalogError(
          `${file}: ready set ${set.id} shot ${shot.id} refers to an unknown model, venue or pose`,
        );
      }
    }
  }
  return { ...data, filePath: (asset: string) => path.join(dir, asset) };
}
