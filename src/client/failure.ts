/**
 * What an HTTP failure tells the scheduler, read from the transport rather than from messages:
 * how long a `Retry-After` asks to wait, and whether a request that got no answer certainly
 * never went out.
 */

/**
 * `Retry-After` as milliseconds from when the answer arrived (RFC 9110 10.2.3): delay-seconds (a
 * non-negative whole number), or an HTTP date measured against the answer's own `Date` header when
 * it has one, so the two clocks need not agree. Null when absent or in any other form: V8's
 * `Date.parse` reads '-1' and '0.5' as dates in 2001 and 2000, i.e. "now" (rev15 J2).
 */
export function retryAfterFrom(headers: Headers, now: number = Date.now()): number | null {
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return null;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = httpDate(raw, now);
  if (at === null) return null;
  const served = httpDate(headers.get('date')?.trim() ?? '', now);
  return Math.max(0, at - (served ?? now));
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAME = '(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*';
const MONTH = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT". */
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
/** Obsolete RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT". */
const RFC850_DATE = new RegExp(`^${DAY_NAME}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i');
/** Obsolete asctime "Sun Nov  6 08:49:37 1994" (UTC, though it does not say so). */
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`, 'i');

/** An HTTP-date (RFC 9110 5.6.7) in any of its three forms, as epoch ms; null for anything else. */
export function httpDate(text: string, now: number = Date.now()): number | null {
  let parts: [day: string, month: string, year: number, h: string, m: string, s: string];
  let m = IMF_FIXDATE.exec(text);
  if (m) parts = [m[1]!, m[2]!, Number(m[3]), m[4]!, m[5]!, m[6]!];
  else if ((m = RFC850_DATE.exec(text))) {
    // A two-digit year more than 50 years ahead is the last such year in the past (RFC 9110).
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    parts = [m[1]!, m[2]!, year, m[4]!, m[5]!, m[6]!];
  } else if ((m = ASCTIME_DATE.exec(text)))
    parts = [m[2]!, m[1]!, Number(m[6]), m[3]!, m[4]!, m[5]!];
  else return null;
  const [day, month, year, h, min, s] = parts;
  const at = Date.UTC(year, MONTHS.indexOf(month.toLowerCase()), Number(day), +h, +min, +s);
  // Out-of-range fields ("31 Feb", "25:00:00") roll over in Date.UTC: not a date.
  const back = new Date(at);
  return back.getUTCDate() === Number(day) && back.getUTCHours() === +h && +min < 60 && +s < 61
    ? at
    : null;
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

/** What an operator can act on, for the transport's codes (the code itself follows in brackets). */
const PLAIN_WORDS: [test: (code: string) => boolean, words: string][] = [
  [(c) => c === 'ECONNREFUSED', 'nothing answers at that address'],
  [(c) => c === 'ENOTFOUND' || c.startsWith('EAI_'), 'the host name is not known'],
  [(c) => c === 'EHOSTUNREACH' || c === 'ENETUNREACH', 'the network cannot reach that host'],
  [(c) => c === 'UND_ERR_CONNECT_TIMEOUT', 'the host did not take the connection in time'],
  [
    (c) => c.includes('CERT') || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_'),
    "the service's TLS certificate is not trusted",
  ],
];

/**
 * The innermost cause's words ("connect ECONNREFUSED 127.0.0.1:9"), not fetch's "fetch failed",
 * led by what they mean in plain words where the code is a known one.
 */
export function describeFailure(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const text =
    e instanceof Error ? e.message || (e as { code?: string }).code || e.name : String(e);
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer in time (${text})`;
  // fetch refuses ports browsers block (9, 25, 6000...) before connecting.
  if (text === 'bad port') return 'fetch does not connect to that port (bad port): use another';
  const codes = codesOf(err);
  const plain = PLAIN_WORDS.find(([test]) => codes.some(test))?.[1];
  return plain ? `${plain} (${text})` : text;
}
