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
 * Fetches a file and types it by its bytes: the Content-Type a CDN or object store sends
 * (often `application/octet-stream`) is kept as `servedAs` and never trusted. `silenceMs` bounds
 * the wait for the answer and then each gap between the body's bytes, not the whole transfer: a
 * video arriving slowly but steadily over more than a minute was cut at 60 s on every try, paid
 * and never collected (review rev23 N4). `DOWNLOAD_MAX_MS` bounds the whole.
 */
export async function fetchDownload(
  url: string,
  headers: Record<string, string> = {},
  silenceMs = 60_000,
  maxMs = DOWNLOAD_MAX_MS,
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
    response = await fetch(url, { headers, signal: abort.signal });
    heard();
    if (!response.ok) {
      // The host's own words (an object store's 'Request has expired') tell a dead link from an outage.
      const said = (await response.text().catch(() => ''))
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 200);
      throw new ApiError(
        response.status,
        `download of ${url} answered ${response.status}${said ? `: ${said}` : ''}`,
      );
    }
    data = await readBody(response, heard);
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

/** The body's bytes, `heard` called on each chunk (the silence timer starts again). */
async function readBody(response: Response, heard: () => void): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) {
    heard();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
