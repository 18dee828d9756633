/**
 * Downloads of files outside our own blob store, shared by both clients; loads no core.
 */
import { ApiError, type Download } from './service-client';
import { judgeDownload } from './media-type';

/**
 * Fetches a file and types it by its bytes: the Content-Type a CDN or object store sends
 * (often `application/octet-stream`) is kept as `servedAs` and never trusted.
 */
export async function fetchDownload(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<Download> {
  let response: Response;
  let data: Buffer;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
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
    data = Buffer.from(await response.arrayBuffer());
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      0,
      `could not download ${url}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const servedAs = response.headers.get('content-type');
  return { data, servedAs, ...judgeDownload(data, { what: `the file at ${url}`, servedAs }) };
}
