/**
 * Wraps a ServiceClient so that every /v1 request is counted (the engine keeps its own count of
 * requests per key and UTC day against the daily cap) and none goes out once the count has reached
 * it: `onRequest` throws then, and the call fails with that error without sending anything.
 * A client that can say when it sends (`guardRequests`, the HTTP client) is counted per request
 * sent, since one call may send several; any other per call. Downloads of result files are not
 * API calls and are not counted, except files under the service's own /v1 (the HTTP client counts
 * those, and each redirect hop to its /v1, through its guard). Catalog reads go through a single-flight memory placed outside
 * the count, so concurrent callers share one request and an answer from memory is not counted.
 */
import { ApiError, withCatalogMemo, type ServiceClient } from '../client';

const NOT_COUNTED = new Set<keyof ServiceClient>(['origin', 'download', 'close', 'guardRequests']);

export type CountedClient = {
  client: ServiceClient;
  /** Stops counting (the engine closes; the inner client may live on). */ release: () => void;
};

export function countingClient(
  inner: ServiceClient,
  onRequest: () => void,
  onNeverSent: () => void = () => {},
): CountedClient {
  let released = false;
  const giveBack = () => {
    if (!released) onNeverSent();
  };
  if (inner.guardRequests) {
    const unguard = inner.guardRequests(onRequest);
    return {
      client: withCatalogMemo(counted(inner, null, giveBack)),
      release: () => {
        released = true;
        unguard();
      },
    };
  }
  const countCall = () => {
    if (!released) onRequest();
  };
  return {
    client: withCatalogMemo(counted(inner, countCall, giveBack)),
    release: () => {
      released = true;
    },
  };
}

/**
 * Every call but NOT_COUNTED: `countCall` before it goes out (null where the client counts the
 * requests it sends through `guardRequests`), and `giveBack` when it fails because its request
 * certainly never left (connection refused, host unknown: the client's `notSent` with no answer):
 * the service cannot have counted it (review uirev A4: 114 -> 152 of the day's requests used while
 * every connection was refused). One that may have arrived (a reset or timeout after sending)
 * stays counted. Its own-cap 429 is `notSent` too but was never counted (status 429, not 0).
 */
function counted(
  inner: ServiceClient,
  countCall: (() => void) | null,
  giveBack: () => void,
): ServiceClient {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || NOT_COUNTED.has(prop as keyof ServiceClient)) {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (...args: unknown[]) => {
        try {
          countCall?.();
        } catch (err) {
          // Every counted call returns a promise: the refusal is a rejection, never a throw.
          return Promise.reject(err);
        }
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.catch((err: unknown) => {
          if (err instanceof ApiError && err.status === 0 && err.notSent) giveBack();
          throw err;
        });
      };
    },
  });
}
