/**
 * The service's catalog (tools, people, venues, poses, ready shoots) and the account's saved
 * looks, kept on disk for a day so that opening the recipe builder costs no requests when warm.
 * One JSON file in the studio data folder, written atomically, with an entry per service origin
 * and key fingerprint (never the key). When the service cannot be reached, or refuses for a
 * while (429, 5xx), the last copy is served with its age rather than an empty builder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  ApiError,
  MAX_READY_SET_PAGES,
  readAllReadySets,
  withoutCatalogMemo,
  type ReadySetsStop,
  type ServiceClient,
} from '../client';
import type { CatalogCacheInfo, CatalogView, LookView } from '../shared/studio';
import { writeFileAtomic } from '../infra/atomic-write';

export const CATALOG_CACHE_FILE = 'catalog-cache.json';
export const CATALOG_CACHE_MS = 24 * 60 * 60_000;

const POSE_TYPES = [undefined, 'ring', 'necklace', 'earring', 'bracelet'] as const;
const STOPPED: Record<Exclude<ReadySetsStop, 'end'>, string> = {
  cursor_repeated: 'the service sent back a cursor it had sent before, so reading stopped',
  page_repeated:
    'the service answered a page already read (it ignores our cursor), so reading stopped',
  page_limit: `reading stopped at the limit of ${MAX_READY_SET_PAGES} pages`,
};

const Listed = z.array(z.looseObject({ id: z.string().min(1) }));
/** Copies written before "ready shoot" was the one name keep that list as `readySets`. */
const renamedReadySets = (value: unknown): unknown => {
  if (typeof value !== 'object' || value === null || !('readySets' in value)) return value;
  const { readySets, ...rest } = value;
  return { readyShoots: readySets, ...rest };
};
const CatalogSchema = z.preprocess(
  renamedReadySets,
  z.object({
    tools: Listed,
    fashionModels: Listed,
    venues: Listed,
    poses: Listed,
    readyShoots: Listed,
    warnings: z.array(z.string()),
  }),
);
type StoredCatalog = Omit<CatalogView, 'cache'> & { warnings: string[] };
const Entry = <T extends z.ZodType>(value: T) => z.object({ fetchedAt: z.iso.datetime(), value });
const CacheFileSchema = z.object({
  version: z.literal(1),
  entries: z.record(
    z.string(),
    z.object({ catalog: Entry(CatalogSchema).optional(), looks: Entry(Listed).optional() }),
  ),
});
type CacheFile = z.infer<typeof CacheFileSchema>;
type Kind = 'catalog' | 'looks';

/** Reads the whole catalog from the service: 9 requests when every list fits one page. */
export async function readCatalog(client: ServiceClient): Promise<StoredCatalog> {
  const [tools, fashionModels, venues, poses, ready] = await Promise.all([
    client.listModels(),
    client.listFashionModels({ limit: 100 }),
    client.listVenues({ limit: 100 }),
    // The default set and each jewelry set; the type asked for is kept on each pose (a service
    // need not echo it, and the builder filters poses by it).
    Promise.all(
      POSE_TYPES.map(async (type) =>
        (await client.listPoses({ ...(type ? { type } : {}), limit: 100 })).map((pose) => ({
          ...pose,
          type: pose.type ?? type ?? 'default',
        })),
      ),
    ).then((lists) => lists.flat()),
    readAllReadySets(client),
  ]);
  const warnings =
    ready.stop === 'end'
      ? []
      : [
          `Ready shoots: ${ready.templateSets.length} read in ${ready.pages} requests, then ${STOPPED[ready.stop]}; the service may have more.`,
        ];
  return { tools, fashionModels, venues, poses, readyShoots: ready.templateSets, warnings };
}

/** Failures that say nothing about the catalog itself: the last copy is better than none. */
function servedStaleOn(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 0 || err.status === 429 || err.status >= 500);
}

export class CatalogCache {
  private readonly file: string;
  private readonly ttlMs: number;
  private readonly now: () => Date;
  private data: CacheFile | null = null;
  private writing: Promise<void> = Promise.resolve();
  private readonly inFlight = new Map<Kind, Promise<unknown>>();

  private readonly client: ServiceClient;

  constructor(
    client: ServiceClient,
    options: { dataDir: string; ttlMs?: number; now?: () => Date },
  ) {
    // This cache decides when a copy is too old; the in-memory memo must not answer in its place.
    this.client = withoutCatalogMemo(client);
    this.file = path.join(options.dataDir, CATALOG_CACHE_FILE);
    this.ttlMs = options.ttlMs ?? CATALOG_CACHE_MS;
    this.now = options.now ?? (() => new Date());
  }

  /** Entries are per service and key; the fingerprint is a one-way hash of the key. */
  private get key(): string {
    return `${this.client.origin} ${this.client.keyFingerprint}`;
  }

  /** The whole catalog, from disk when under a day old, with where it came from and how old it is. */
  async catalog(options: { refresh?: boolean } = {}): Promise<CatalogView> {
    const { value, cache } = await this.cached(
      'catalog',
      () => readCatalog(this.client),
      options.refresh,
    );
    const { warnings, ...catalog } = value as StoredCatalog;
    return { ...catalog, cache: { ...cache, warnings } };
  }

  /** The account's looks (`/v1/template-sets`); our own saves and deletes refresh them. */
  async looks(options: { refresh?: boolean } = {}): Promise<LookView[]> {
    return (await this.cached('looks', () => this.client.listTemplateSets(), options.refresh))
      .value as LookView[];
  }

  /** After a look was saved or deleted through this studio. */
  async forgetLooks(): Promise<void> {
    const data = this.load();
    const entry = data.entries[this.key];
    if (!entry?.looks) return;
    delete entry.looks;
    // The delete or save itself succeeded; a cache file that cannot be written must not undo that.
    await this.persist().catch(() => undefined);
  }

  private async cached(
    kind: Kind,
    fetch: () => Promise<unknown>,
    refresh = false,
  ): Promise<{ value: unknown; cache: Omit<CatalogCacheInfo, 'warnings'> }> {
    const entry = this.load().entries[this.key]?.[kind];
    const now = this.now().getTime();
    const age = entry ? now - Date.parse(entry.fetchedAt) : Infinity;
    // A copy from the future (clock moved back) is not trusted as fresh.
    if (entry && !refresh && age >= 0 && age < this.ttlMs)
      return { value: entry.value, cache: this.info(entry.fetchedAt, age, null) };
    try {
      const value = await this.singleFlight(kind, fetch);
      return {
        value,
        cache: this.info(
          this.load().entries[this.key]?.[kind]?.fetchedAt ?? this.now().toISOString(),
          0,
          null,
        ),
      };
    } catch (err) {
      if (!entry || !servedStaleOn(err)) throw err;
      const message = err instanceof Error ? err.message : String(err);
      return { value: entry.value, cache: this.info(entry.fetchedAt, Math.max(0, age), message) };
    }
  }

  private info(
    fetchedAt: string,
    ageMs: number,
    error: string | null,
  ): Omit<CatalogCacheInfo, 'warnings'> {
    return {
      fetchedAt,
      ageSeconds: Math.round(ageMs / 1000),
      stale: error !== null || ageMs >= this.ttlMs,
      error,
    };
  }

  /** One read per kind at a time: a second caller waits for the first instead of asking again. */
  private singleFlight(kind: Kind, fetch: () => Promise<unknown>): Promise<unknown> {
    const running = this.inFlight.get(kind);
    if (running) return running;
    const read = (async () => {
      const value = await fetch();
      const fetchedAt = this.now().toISOString();
      const data = this.load();
      const entry = (data.entries[this.key] ??= {});
      if (kind === 'catalog') entry.catalog = { fetchedAt, value: CatalogSchema.parse(value) };
      else entry.looks = { fetchedAt, value: Listed.parse(value) };
      // A cache that cannot be written (disk full, read-only folder) must not cost the answer.
      await this.persist().catch(() => undefined);
      return value;
    })().finally(() => this.inFlight.delete(kind));
    this.inFlight.set(kind, read);
    return read;
  }

  /** The file as last written; a missing, damaged or foreign file is an empty cache, never an error. */
  private load(): CacheFile {
    if (this.data) return this.data;
    let parsed: CacheFile = { version: 1, entries: {} };
    try {
      const result = CacheFileSchema.safeParse(JSON.parse(fs.readFileSync(this.file, 'utf8')));
      if (result.success) parsed = result.data;
    } catch {
      // Not there yet, or not JSON: start empty; the next read rewrites it.
    }
    this.data = parsed;
    return parsed;
  }

  /** Writes are queued so two reads finishing together cannot interleave their files. */
  private persist(): Promise<void> {
    const snapshot = Buffer.from(JSON.stringify(this.load()));
    this.writing = this.writing
      .catch(() => undefined)
      .then(() => writeFileAtomic(this.file, snapshot, 'overwrite'))
      .then(() => undefined);
    return this.writing;
  }
}
