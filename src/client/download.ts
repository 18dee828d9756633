/**
 * Downloads of files outside our own blob store, shared by both clients; loads no core.
 */
import { ApiError, type Download } from './service-client';
import { judgeDownload } from './media-type';

/**
 * The longest a whole download may take, however steadily its bytes arrive: a bound against a
 * host that trickles forever (a 10 MB clip at 1 Mbit/s takes 80 s; this allows 30 min).
 */
export const DOWNLOAD_MAX_MS = 30 * 60_000;

/**
 * The most bytes one download may bring (review rev24 R6: a host streaming steadily was read into
 * memory for up to 30 min, 6 tries). The spec bounds no output (ai_videos: "duration: maximum not
 * shown"); a 4K clip of a minute at 50 Mbit/s is ~375 MB, so 512 MiB leaves room for any result.
 */
export const DOWNLOAD_MAX_BYTES = 512 * 1024 * 1024;

/** A download refused for its size (announced or streamed past `maxBytes`): asking again will not help. */
export class DownloadTooLargeError extends ApiError {
  override name = 'DownloadTooLargeError';
  constructor(
    readonly url: string,
    readonly maxBytes: number,
    announced: number | null,
  ) {
    super(
      0,
      `download of ${url} refused: ${announced !== null ? `it announced ${announced} bytes` : `its body passed ${maxBytes} bytes`}, more than the ${maxBytes} bytes any result may have (nothing was kept)`,
    );
  }
  override get retryable(): boolean {
    return false;
  }
}

/**
 * A download whose redirects ran out: a loop (a URL met again) or more hops than `maxHops`.
 * Asking again in this run would only spend more of the day's requests on the same hops.
 */
export class DownloadRedirectError extends ApiError {
  override name = 'DownloadRedirectError';
  constructor(url: string, status: number, to: string, hops: number, loop: boolean) {
    super(
      status,
      loop
        ? `download of ${url} refused: a redirect loop (answer ${status} after ${hops} redirect(s) leads back to ${to}); nothing was kept`
        : `download of ${url} refused: still redirected (answer ${status} to ${to}) after ${hops} redirect(s), the most a result file may take; nothing was kept`,
    );
  }
  override get retryable(): boolean {
    return false;
  }
}

/**
 * Redirects followed by hand (fetch's own following sends every hop unseen, 20 of them): at most
 * `maxHops`, `beforeHop` told of each (it counts the hops the service counts, and may throw to keep
 * one from going out). The headers go no further than the first URL's origin, as fetch does.
 */
export type RedirectPolicy = { maxHops: number; beforeHop: (to: URL) => void };

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches a file and types it by its bytes: the Content-Type a CDN or object store sends
 * (often `application/octet-stream`) is kept as `servedAs` and never trusted. `silenceMs` bounds
 * the wait for the answer and then each gap between the body's bytes, not the whole transfer: a
 * video arriving slowly but steadily over more than a minute was cut at 60 s on every try, paid
 * and never collected (review rev23 N4). `DOWNLOAD_MAX_MS` bounds the whole, `maxBytes` its size
 * (a Content-Length above it is refused at once, a body is cut as it passes it).
 */
export async function fetchDownload(
  url: string,
  headers: Record<string, string> = {},
  silenceMs = 60_000,
  maxMs = DOWNLOAD_MAX_MS,
  maxBytes = DOWNLOAD_MAX_BYTES,
  redirects?: RedirectPolicy,
): Promise<Download> {
  const abort = new AbortController();
  let silent: NodeJS.Timeout | undefined;
  const heard = () => {
    clearTimeout(silent);
    silent = setTimeout(() => abort.abort(new Error(`no bytes for ${silenceMs} ms`)), silenceMs);
  };
  const whole = setTimeout(() => abort.abort(new Error(`not complete after ${maxMs} ms`)), maxMs);
  let response: Response;
  let data: Buffer;
  try {
    heard();
    response = redirects
      ? await fetchFollowing(url, headers, abort.signal, redirects, heard)
      : await fetch(url, { headers, signal: abort.signal });
    heard();
    if (!response.ok) {
      // The host's own words (an object store's 'Request has expired') tell a dead link from an outage.
      const said = await hostWords(response);
      throw new ApiError(
        response.status,
        `download of ${url} answered ${response.status}${said ? `: ${said}` : ''}`,
      );
    }
    if (response.status === 202 || response.status === 204) {
      // Accepted or no content: the file is still being written (a file endpoint's own word for
      // what an object store says with 404). Read as 'not an image', the paid result was held
      // for the next run while a 404 was waited on (review rev27 D6).
      const said = await hostWords(response);
      throw new ApiError(
        response.status,
        `download of ${url} answered ${response.status}${said ? `: ${said}` : ''}: the file is not ready yet`,
      );
    }
    const announced = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(announced) && announced > maxBytes) {
      abort.abort();
      throw new DownloadTooLargeError(url, maxBytes, announced);
    }
    data = await readBody(response, heard, maxBytes, () => {
      abort.abort();
      return new DownloadTooLargeError(url, maxBytes, null);
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const why = abort.signal.aborted ? abort.signal.reason : err;
    throw new ApiError(
      0,
      `could not download ${url}: ${why instanceof Error ? why.message : String(why)}`,
    );
  } finally {
    clearTimeout(silent);
    clearTimeout(whole);
  }
  const servedAs = response.headers.get('content-type');
  return { data, servedAs, ...judgeDownload(data, { what: `the file at ${url}`, servedAs }) };
}

/** `fetch` with its redirects followed under `policy` (see `RedirectPolicy`). */
async function fetchFollowing(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  policy: RedirectPolicy,
  heard: () => void,
): Promise<Response> {
  const first = new URL(url);
  const seen = new Set([first.href]);
  let at = first;
  let sent = headers;
  for (let hops = 0; ; hops++) {
    const response = await fetch(at, { headers: sent, signal, redirect: 'manual' });
    heard();
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    await response.body?.cancel();
    const to = new URL(location, at);
    if (seen.has(to.href) || hops >= policy.maxHops)
      throw new DownloadRedirectError(url, response.status, to.href, hops + 1, seen.has(to.href));
    seen.add(to.href);
    policy.beforeHop(to);
    if (to.origin !== at.origin) sent = {};
    at = to;
  }
}

/** The first 200 characters of an answer's body, on one line: what the host said instead of a file. */
async function hostWords(response: Response): Promise<string> {
  return (await response.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 200);
}

/**
 * The body's bytes, `heard` called on each chunk (the silence timer starts again); past
 * `maxBytes` the chunks read are dropped and `tooLarge`'s error thrown.
 */
async function readBody(
  response: Response,
  heard: () => void,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    heard();
    size += chunk.length;
    if (size > maxBytes) {
      chunks.length = 0;
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
