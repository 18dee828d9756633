/**
 * What an HTTP failure tells the scheduler, read from the transport rather than from messages:
 * how long a `Retry-After` asks to wait, and whether a request that got no answer certainly
 * never went out.
 */

/**
 * `Retry-After` as milliseconds from when the answer arrived: delta-seconds, or an HTTP date
 * (RFC 9110 10.2.3) measured against the answer's own `Date` header when it has one, so the two
 * clocks need not agree. Null when absent or unreadable.
 */
export function retryAfterFrom(headers: Headers, now: number = Date.now()): number | null {
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return null;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return null;
  const served = Date.parse(headers.get('date') ?? '');
  return Math.max(0, at - (Number.isNaN(served) ? now : served));
}

/**
 * Error codes that mean no byte of the request reached the service: refused or unroutable
 * connections, names that did not resolve, a connect that timed out, TLS that failed before the
 * handshake finished. A reset, a closed socket or a timeout once connected is not here: the
 * request may have been read and acted on.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'EPROTO',
]);

function codesOf(err: unknown, seen = new Set<unknown>()): string[] {
  if (!err || typeof err !== 'object' || seen.has(err)) return [];
  seen.add(err);
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === 'string' ? [e.code] : [];
  // Happy-eyeballs connects fail with an AggregateError of one error per address tried.
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, seen)) : [];
  return [...own, ...codesOf(e.cause, seen), ...nested];
}

/** Whether a failed fetch certainly never sent its request (every code found says so). */
export function certainlyNotSent(err: unknown): boolean {
  const codes = codesOf(err);
  return (
    codes.length > 0 &&
    codes.every(
      (c) => NOT_SENT_CODES.has(c) || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_'),
    )
  );
}

/** The innermost cause's words ("connect ECONNREFUSED 127.0.0.1:9"), not fetch's "fetch failed". */
export function describeFailure(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const text =
    e instanceof Error ? e.message || (e as { code?: string }).code || e.name : String(e);
  return err instanceof Error && err.name === 'TimeoutError' ? `no answer in time (${text})` : text;
}
