/**
 * HTTP plumbing shared by the remote adapters: requests with the job's abort signal, 429 answered
 * by waiting for `Retry-After`, and error messages that never carry the provider key.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderError } from '../types';

export type RemoteCall = {
  secret: string;
  provider: string;
  signal: AbortSignal;
  maxRetries?: number;
};

/** Removes the provider key (and anything that looks like a bearer token) from a message. */
export function redact(message: string, secret: string): string {
  let clean = secret ? message.split(secret).join('[redacted]') : message;
  clean = clean.replace(/(Bearer|Key)\s+[A-Za-z0-9._:-]{8,}/g, '$1 [redacted]');
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}

function retryAfterMs(response: Response): number {
  const header = response.headers.get('retry-after');
  if (!header) return 2000;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(60_000, Math.max(0, seconds * 1000));
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.min(60_000, Math.max(0, date - Date.now())) : 2000;
}

/** fetch with 429 retries; other non-2xx answers become ProviderErrors with a readable message. */
export async function call(url: string, init: RequestInit, ctx: RemoteCall): Promise<Response> {
  const maxRetries = ctx.maxRetries ?? 5;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: ctx.signal });
    } catch (error) {
      if (ctx.signal.aborted)
        throw ctx.signal.reason instanceof Error
          ? ctx.signal.reason
          : new ProviderError(`${ctx.provider}: cancelled`);
      throw new ProviderError(
        redact(
          `${ctx.provider} could not be reached: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`,
          ctx.secret,
        ),
      );
    }
    if (response.status === 429 && attempt < maxRetries) {
      await response.body?.cancel();
      await sleep(retryAfterMs(response), undefined, { signal: ctx.signal });
      continue;
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      throw new ProviderError(
        redact(
          `${ctx.provider} answered ${response.status}${text ? `: ${summarise(text)}` : ''}`,
          ctx.secret,
        ),
      );
    }
    return response;
  }
}

/** The useful part of an error body: a JSON `detail`/`error`/`message`, or the text itself. */
function summarise(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const pick = body.detail ?? body.error ?? body.message;
    if (typeof pick === 'string') return pick;
    if (pick && typeof pick === 'object' && 'message' in pick && typeof pick.message === 'string')
      return pick.message;
    return JSON.stringify(pick ?? body).slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

export async function json<T>(response: Response, what: string, ctx: RemoteCall): Promise<T> {
  try {
    return (await response.json()) as T;
  } catch {
    throw new ProviderError(redact(`${ctx.provider} sent an unreadable ${what}`, ctx.secret));
  }
}

/** Downloads a result the provider points at, with the same signal and a size cap. */
export async function download(
  url: string,
  ctx: RemoteCall,
  maxBytes = 200 * 1024 * 1024,
): Promise<Buffer> {
  if (url.startsWith('data:')) {
    const match = /^data:[^;,]+;base64,(.*)$/s.exec(url);
    if (!match?.[1]) throw new ProviderError(`${ctx.provider} returned an unreadable data URI`);
    return Buffer.from(match[1], 'base64');
  }
  const response = await call(url, {}, { ...ctx, maxRetries: 2 });
  const data = Buffer.from(await response.arrayBuffer());
  if (data.length > maxBytes)
    throw new ProviderError(`${ctx.provider} result is larger than ${maxBytes} bytes`);
  return data;
}
