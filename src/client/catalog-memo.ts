/**
 * Single-flight memory of the service's catalog reads (tools, people, venues, poses, ready sets),
 * so concurrent callers that each need the tool table (pricing, recipe checks, the UI) share one
 * request instead of all missing an empty cache at once. Failures are not remembered.
 * Wrap it outside a request counter: a call answered from memory is not a request.
 */
import type { ServiceClient } from './service-client';

/** Catalogs change rarely; prices are "resolved per request" anyway (spec 2.1). */
export const CATALOG_MEMO_MS = 10 * 60_000;

const MEMOIZED = [
  'listModels',
  'listFashionModels',
  'listVenues',
  'listPoses',
  'listReadySets',
  'getReadySet',
] as const;
type Memoized = (typeof MEMOIZED)[number];

export type CatalogMemoOptions = { ttlMs?: number; now?: () => number };

const unmemoized = new WeakMap<ServiceClient, ServiceClient>();

/**
 * The client under the memory, for a caller that has decided for itself that it needs a fresh
 * answer (the on-disk catalog cache, when its copy is a day old or a refresh is asked for).
 */
export function withoutCatalogMemo(client: ServiceClient): ServiceClient {
  return unmemoized.get(client) ?? client;
}

export function withCatalogMemo(
  inner: ServiceClient,
  options: CatalogMemoOptions = {},
): ServiceClient {
  const ttlMs = options.ttlMs ?? CATALOG_MEMO_MS;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { at: number; value: Promise<unknown> }>();

  const memo =
    (name: Memoized) =>
    (...args: unknown[]): Promise<unknown> => {
      const key = `${name} ${JSON.stringify(args)}`;
      const hit = entries.get(key);
      if (hit && now() - hit.at < ttlMs) return hit.value;
      const call = (inner[name] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
      const entry = { at: now(), value: call };
      entries.set(key, entry);
      // Only the attempt that failed is forgotten, never a newer one that replaced it.
      void call.catch(() => entries.get(key) === entry && entries.delete(key));
      return call;
    };
  const wrappers = new Map<PropertyKey, unknown>(MEMOIZED.map((name) => [name, memo(name)]));

  const memoized = new Proxy(inner, {
    get(target, prop, receiver) {
      if (wrappers.has(prop)) return wrappers.get(prop);
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
  unmemoized.set(memoized, inner);
  return memoized;
}
