/**
 * Wraps a ServiceClient so that every /v1 request is counted (the engine keeps its own count of
 * requests per key and UTC day against the daily cap) and none goes out once the count has reached
 * it: `onRequest` throws then, and the call fails with that error without sending anything.
 * A client that can say when it sends (`guardRequests`, the HTTP client) is counted per request
 * sent, since one call may send several; any other per call. Downloads of result files are not
 * API calls and are not counted, except files under the service's own /v1 (the HTTP client counts
 * those through its guard). Catalog reads go through a single-flight memory placed outside
 * the count, so concurrent callers share one request and an answer from memory is not counted.
 */
import { withCatalogMemo, type ServiceClient } from '../client';

const NOT_COUNTED = new Set<keyof ServiceClient>(['origin', 'download', 'close', 'guardRequests']);

export type CountedClient = {
  client: ServiceClient;
  /** Stops counting (the engine closes; the inner client may live on). */ release: () => void;
};

export function countingClient(inner: ServiceClient, onRequest: () => void): CountedClient {
  if (inner.guardRequests) {
    const release = inner.guardRequests(onRequest);
    return { client: withCatalogMemo(inner), release };
  }
  let released = false;
  return {
    client: withCatalogMemo(
      counted(inner, () => {
        if (!released) onRequest();
      }),
    ),
    release: () => {
      released = true;
    },
  };
}

function counted(inner: ServiceClient, onRequest: () => void): ServiceClient {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || NOT_COUNTED.has(prop as keyof ServiceClient)) {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (...args: unknown[]) => {
        try {
          onRequest();
        } catch (err) {
          // Every counted call returns a promise: the refusal is a rejection, never a throw.
          return Promise.reject(err);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
