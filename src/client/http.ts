/**
 * A remote service speaking /v1 (base URL + API key). Thin: one request per call, errors as
 * ApiError with the service's own message; retries and backoff belong to the studio scheduler.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ApiError, type Download, type ServiceClient, type WriteOptions } from './service-client';
import { fetchDownload } from './download';
import { certainlyNotSent, describeFailure, retryAfterFrom } from './failure';
import { sniffUploadMime } from './media-type';

/**
 * The spec does not name the request parameter that carries `nextCursor` back (4.10), so a page
 * request sends it under each name in common use at once; services ignore query parameters they
 * do not know. `cursor` pairs with the `nextCursor` field (the usual convention), `nextCursor`
 * echoes the field's own name, `after` is the Relay/GraphQL-style name, `pageToken` Google's
 * (AIP-158). Stripe's `starting_after` is left out: it takes an object id, not an opaque cursor,
 * and a service that validates it would refuse every page. A service that refuses the extra
 * names (400) is asked again with one name at a time, and the name it accepts is kept.
 */
export const CURSOR_PARAMS = ['cursor', 'nextCursor', 'after', 'pageToken'] as const;

/** One page of ready sets as the spec shows it; extra fields pass through, the cursor is normalised. */
const ReadySetsPageSchema = z.looseObject({
  templateSets: z.array(z.looseObject({ id: z.string().min(1) })),
  nextCursor: z
    .union([z.string(), z.number(), z.null()])
    .optional()
    .transform((c) => (c === undefined || c === null || c === '' ? null : String(c))),
});

/**
 * One ready set as GET /v1/ready-template-sets/{id} answers it. The spec shows no body: the set
 * may come under `templateSet` (as the list's entries), `readyTemplateSet`, or at the top level.
 * A shot count left out is the shot list's length; a set with no shot to count is unreadable.
 */
const ReadySetSchema = z
  .looseObject({
    id: z.string().min(1),
    shots: z.array(z.looseObject({ id: z.string().min(1) })),
    shotCount: z.number().int().positive().optional(),
  })
  .transform((set) => ({ ...set, shotCount: set.shotCount ?? set.shots.length }))
  .refine((set) => set.shotCount > 0, { message: 'no shot in the set' });
const ReadySetDetailSchema = z.union([
  z.looseObject({ templateSet: ReadySetSchema }).transform((body) => body.templateSet),
  z.looseObject({ readyTemplateSet: ReadySetSchema }).transform((body) => body.readyTemplateSet),
  ReadySetSchema,
]);

/**
 * Per-shot progress of a catalog job (beyond the spec). Another service may send a `shots` field
 * of its own shape: it is dropped, and the job is read from the spec's fields alone.
 */
const ShotsSchema = z.array(
  z.looseObject({
    shotId: z.string(),
    status: z.string(),
    resultUrls: z.array(z.string()),
  }),
);

/** A one-way fingerprint of an API key: enough to tell keys apart in caches, useless to a reader. */
export function fingerprintKey(apiKey: string): string {
  return createHash('sha256')
    .update(`dropshoot/key-fingerprint/v1\0${apiKey}`)
    .digest('hex')
    .slice(0, 24);
}

export type HttpClientOptions = { baseUrl: string; apiKey: string; timeoutMs?: number };

export class HttpClient implements ServiceClient {
  readonly origin: string;
  readonly keyFingerprint: string;
  private readonly base: string;
  /** The cursor parameter name learnt from a service that refused the others, if any. */
  private cursorParam: string | null = null;

  constructor(private readonly opts: HttpClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.origin = this.base;
    this.keyFingerprint = fingerprintKey(opts.apiKey);
  }

  private readonly guards = new Set<() => void>();

  /**
   * Runs `guard` before each /v1 request this client sends (one call may send several: a strict
   * service asked with one cursor name at a time); a guard that throws keeps that request from
   * going out, and the call fails with its error. Returns the guard's removal.
   */
  guardRequests(guard: () => void): () => void {
    this.guards.add(guard);
    return () => {
      this.guards.delete(guard);
    };
  }

  private async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    init: {
      query?: Record<string, string | number | undefined>;
      json?: unknown;
      idempotencyKey?: string;
    } = {},
  ): Promise<T> {
    return (await this.exchange<T>(method, path, init)).body;
  }

  /**
   * A write with an Idempotency-Key: also reports whether the service echoed it. An echo is no
   * proof the key is honoured (the studio learns that by a replay probe, src/studio/idempotency.ts).
   */
  private async write<T>(
    path: string,
    init: { json?: unknown; raw?: { data: Buffer; mime: string } },
    options?: WriteOptions,
  ): Promise<T & { idempotencyHonoured: boolean }> {
    const key = options?.idempotencyKey;
    const { body, headers } = await this.exchange<T>('POST', path, {
      ...init,
      ...(key ? { idempotencyKey: key } : {}),
    });
    return {
      ...body,
      idempotencyHonoured: key !== undefined && headers.get('idempotency-key') === key,
    };
  }

  private async exchange<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    init: {
      query?: Record<string, string | number | undefined>;
      json?: unknown;
      raw?: { data: Buffer; mime: string };
      idempotencyKey?: string;
    } = {},
  ): Promise<{ body: T; headers: Headers }> {
    for (const guard of this.guards) guard();
    const url = new URL(`${this.base}${path}`);
    for (const [k, v] of Object.entries(init.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.opts.apiKey}`,
      accept: 'application/json',
    };
    if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.raw) {
      headers['content-type'] = init.raw.mime;
      body = new Uint8Array(init.raw.data);
    }
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 60_000),
      });
    } catch (err) {
      // No answer: the transport says whether the request certainly never went out.
      const notSent = certainlyNotSent(err);
      const what = notSent
        ? 'could not be reached'
        : `could not be reached (no answer to ${method} ${path}; the request may have arrived)`;
      throw new ApiError(0, `the service at ${this.base} ${what}: ${describeFailure(err)}`, {
        notSent,
        cause: err,
      });
    }
    const retryAfterMs = retryAfterFrom(response.headers);
    const text = await response.text().catch(() => '');
    let parsed: { success?: boolean; error?: string } & Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new ApiError(
        response.status >= 400 ? response.status : 502,
        `the service answered ${response.status} with a non-JSON body`,
        { retryAfterMs },
      );
    }
    if (!response.ok || parsed.success !== true) {
      throw new ApiError(
        response.ok ? 502 : response.status,
        parsed.error ?? `the service answered ${response.status}`,
        { retryAfterMs },
      );
    }
    const { success: _success, ...rest } = parsed;
    return { body: rest as T, headers: response.headers };
  }

  async listModels() {
    return (
      await this.request<{ models: Awaited<ReturnType<ServiceClient['listModels']>> }>(
        'GET',
        '/v1/models',
      )
    ).models;
  }
  async listFashionModels(query: Parameters<ServiceClient['listFashionModels']>[0] = {}) {
    return (
      await this.request<{
        fashionModels: Awaited<ReturnType<ServiceClient['listFashionModels']>>;
      }>('GET', '/v1/fashion-models', { query })
    ).fashionModels;
  }
  async listVenues(query: Parameters<ServiceClient['listVenues']>[0] = {}) {
    return (
      await this.request<{ venues: Awaited<ReturnType<ServiceClient['listVenues']>> }>(
        'GET',
        '/v1/venues',
        { query },
      )
    ).venues;
  }
  async listPoses(query: Parameters<ServiceClient['listPoses']>[0] = {}) {
    return (
      await this.request<{ poses: Awaited<ReturnType<ServiceClient['listPoses']>> }>(
        'GET',
        '/v1/poses',
        { query },
      )
    ).poses;
  }
  /**
   * Sends the bytes with the type their signature shows (spec 4.5). Bytes that are no JPEG, PNG
   * or WebP are refused here with the 415 the service would give, without spending a request.
   */
  async upload(data: Buffer, options?: WriteOptions) {
    const mime = sniffUploadMime(data);
    if (!mime)
      throw new ApiError(
        415,
        'not sent: the upload is not a JPEG, PNG or WebP image (judged by its file signature)',
      );
    return this.write<{ id: string; url: string }>('/v1/uploads', { raw: { data, mime } }, options);
  }
  createGeneration(
    request: Parameters<ServiceClient['createGeneration']>[0],
    options?: WriteOptions,
  ) {
    return this.write<{ id: string; status: 'processing' }>(
      '/v1/generations',
      { json: request },
      options,
    );
  }
  async getGeneration(id: string) {
    type Job = Awaited<ReturnType<ServiceClient['getGeneration']>>;
    const { shots, ...job } = await this.request<Omit<Job, 'shots'> & { shots?: unknown }>(
      'GET',
      `/v1/generations/${encodeURIComponent(id)}`,
    );
    const known = shots === undefined ? undefined : ShotsSchema.safeParse(shots);
    return (known?.success ? { ...job, shots: known.data } : job) as Job;
  }
  createTemplateSet(request: Parameters<ServiceClient['createTemplateSet']>[0]) {
    return this.request<{ id: string }>('POST', '/v1/template-sets', { json: request });
  }
  async listTemplateSets() {
    return (
      await this.request<{ templateSets: Awaited<ReturnType<ServiceClient['listTemplateSets']>> }>(
        'GET',
        '/v1/template-sets',
      )
    ).templateSets;
  }
  async deleteTemplateSet(id: string) {
    await this.request('DELETE', `/v1/template-sets/${encodeURIComponent(id)}`);
  }
  getAccount() {
    return this.request<Awaited<ReturnType<ServiceClient['getAccount']>>>('GET', '/v1/account');
  }
  async listReadySets(
    query: Parameters<ServiceClient['listReadySets']>[0] = {},
  ): ReturnType<ServiceClient['listReadySets']> {
    const { cursor, ...rest } = query;
    const page = (names: readonly string[]) =>
      this.request<unknown>('GET', '/v1/ready-template-sets', {
        query: { ...rest, ...Object.fromEntries(names.map((n) => [n, cursor])) },
      });
    let body: unknown;
    if (cursor === undefined) body = await page([]);
    else if (this.cursorParam) body = await page([this.cursorParam]);
    else {
      try {
        body = await page(CURSOR_PARAMS);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 400) throw err;
        body = await this.pageWithOneCursorName(page, err);
      }
    }
    const parsed = ReadySetsPageSchema.safeParse(body);
    if (!parsed.success)
      throw new ApiError(
        502,
        `GET /v1/ready-template-sets answered an unexpected shape: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      );
    return parsed.data as unknown as Awaited<ReturnType<ServiceClient['listReadySets']>>;
  }

  /** A service refused the cursor under several names: ask with one name at a time, keep the one it takes. */
  private async pageWithOneCursorName(
    page: (names: readonly string[]) => Promise<unknown>,
    refusal: ApiError,
  ): Promise<unknown> {
    for (const name of CURSOR_PARAMS) {
      try {
        const body = await page([name]);
        this.cursorParam = name;
        return body;
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 400) throw err;
      }
    }
    throw refusal;
  }
  async getReadySet(id: string) {
    const path = `/v1/ready-template-sets/${encodeURIComponent(id)}`;
    const parsed = ReadySetDetailSchema.safeParse(await this.request<unknown>('GET', path));
    // Waiting cannot mend a body this client cannot read: an answer (status 200), not retryable.
    if (!parsed.success)
      throw new ApiError(
        200,
        `GET ${path} answered a body this studio cannot read (no set with an id and a shot list under templateSet, readyTemplateSet or at the top level): ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      );
    return parsed.data as unknown as Awaited<ReturnType<ServiceClient['getReadySet']>>;
  }
  createCatalogJob(
    request: Parameters<ServiceClient['createCatalogJob']>[0],
    options?: WriteOptions,
  ) {
    return this.write<
      Omit<Awaited<ReturnType<ServiceClient['createCatalogJob']>>, 'idempotencyHonoured'>
    >('/v1/catalog-jobs', { json: request }, options);
  }
  /**
   * Results may live on another host (a CDN), where the API key is never sent, or on the service's
   * own origin behind the key, which it is sent to as on every API call (nothing new is exposed, and
   * no refused request is spent first). A relative URL is read against the base URL. fetch drops
   * the key on a redirect to another origin.
   */
  async download(url: string): Promise<Download> {
    const base = new URL(this.base);
    const target = new URL(url, `${this.base}/`);
    const own = target.origin === base.origin;
    // A file under the service's own /v1 is an API request: counted (and capped) as one.
    if (own && target.pathname.startsWith(`${base.pathname.replace(/\/+$/, '')}/v1/`))
      for (const guard of this.guards) guard();
    return fetchDownload(
      target.href,
      own ? { authorization: `Bearer ${this.opts.apiKey}` } : {},
      this.opts.timeoutMs ?? 60_000,
    );
  }
  async close(): Promise<void> {}
}
