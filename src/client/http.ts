/**
 * A remote service speaking /v1 (base URL + API key). Thin: one request per call, errors as
 * ApiError with the service's own message; retries and backoff belong to the studio scheduler.
 */
import { ApiError, type Download, type ServiceClient, type WriteOptions } from './service-client';
import { fetchDownload } from './in-process';

export type HttpClientOptions = { baseUrl: string; apiKey: string; timeoutMs?: number };

export class HttpClient implements ServiceClient {
  readonly origin: string;
  private readonly base: string;

  constructor(private readonly opts: HttpClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.origin = this.base;
  }

  private async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    init: { query?: Record<string, string | number | undefined>; json?: unknown; raw?: Buffer; idempotencyKey?: string } = {},
  ): Promise<T> {
    return (await this.exchange<T>(method, path, init)).body;
  }

  /** A write with an Idempotency-Key: also reports whether the service echoed (honoured) it. */
  private async write<T>(path: string, init: { json?: unknown; raw?: Buffer }, options?: WriteOptions): Promise<T & { idempotencyHonoured: boolean }> {
    const key = options?.idempotencyKey;
    const { body, headers } = await this.exchange<T>('POST', path, { ...init, ...(key ? { idempotencyKey: key } : {}) });
    return { ...body, idempotencyHonoured: key !== undefined && headers.get('idempotency-key') === key };
  }

  private async exchange<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    init: { query?: Record<string, string | number | undefined>; json?: unknown; raw?: Buffer; idempotencyKey?: string } = {},
  ): Promise<{ body: T; headers: Headers }> {
    const url = new URL(`${this.base}${path}`);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { authorization: `Bearer ${this.opts.apiKey}`, accept: 'application/json' };
    if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.raw) {
      headers['content-type'] = 'application/octet-stream';
      body = new Uint8Array(init.raw);
    }
    let response: Response;
    try {
      response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.opts.timeoutMs ?? 60_000) });
    } catch (err) {
      throw new ApiError(0, `the service at ${this.base} could not be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    const text = await response.text().catch(() => '');
    let parsed: { success?: boolean; error?: string } & Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new ApiError(response.status >= 400 ? response.status : 502, `the service answered ${response.status} with a non-JSON body`);
    }
    if (!response.ok || parsed.success !== true) {
      throw new ApiError(response.ok ? 502 : response.status, parsed.error ?? `the service answered ${response.status}`);
    }
    const { success: _success, ...rest } = parsed;
    return { body: rest as T, headers: response.headers };
  }

  async listModels() {
    return (await this.request<{ models: Awaited<ReturnType<ServiceClient['listModels']>> }>('GET', '/v1/models')).models;
  }
  async listFashionModels(query: Parameters<ServiceClient['listFashionModels']>[0] = {}) {
    return (await this.request<{ fashionModels: Awaited<ReturnType<ServiceClient['listFashionModels']>> }>('GET', '/v1/fashion-models', { query })).fashionModels;
  }
  async listVenues(query: Parameters<ServiceClient['listVenues']>[0] = {}) {
    return (await this.request<{ venues: Awaited<ReturnType<ServiceClient['listVenues']>> }>('GET', '/v1/venues', { query })).venues;
  }
  async listPoses(query: Parameters<ServiceClient['listPoses']>[0] = {}) {
    return (await this.request<{ poses: Awaited<ReturnType<ServiceClient['listPoses']>> }>('GET', '/v1/poses', { query })).poses;
  }
  upload(data: Buffer, options?: WriteOptions) {
    return this.write<{ id: string; url: string }>('/v1/uploads', { raw: data }, options);
  }
  createGeneration(request: Parameters<ServiceClient['createGeneration']>[0], options?: WriteOptions) {
    return this.write<{ id: string; status: 'processing' }>('/v1/generations', { json: request }, options);
  }
  getGeneration(id: string) {
    return this.request<Awaited<ReturnType<ServiceClient['getGeneration']>>>('GET', `/v1/generations/${encodeURIComponent(id)}`);
  }
  createTemplateSet(request: Parameters<ServiceClient['createTemplateSet']>[0]) {
    return this.request<{ id: string }>('POST', '/v1/template-sets', { json: request });
  }
  async listTemplateSets() {
    return (await this.request<{ templateSets: Awaited<ReturnType<ServiceClient['listTemplateSets']>> }>('GET', '/v1/template-sets')).templateSets;
  }
  async deleteTemplateSet(id: string) {
    await this.request('DELETE', `/v1/template-sets/${encodeURIComponent(id)}`);
  }
  getAccount() {
    return this.request<Awaited<ReturnType<ServiceClient['getAccount']>>>('GET', '/v1/account');
  }
  listReadySets(query: Parameters<ServiceClient['listReadySets']>[0] = {}) {
    return this.request<Awaited<ReturnType<ServiceClient['listReadySets']>>>('GET', '/v1/ready-template-sets', { query });
  }
  async getReadySet(id: string) {
    return (await this.request<{ templateSet: Awaited<ReturnType<ServiceClient['getReadySet']>> }>('GET', `/v1/ready-template-sets/${encodeURIComponent(id)}`)).templateSet;
  }
  createCatalogJob(request: Parameters<ServiceClient['createCatalogJob']>[0], options?: WriteOptions) {
    return this.write<Omit<Awaited<ReturnType<ServiceClient['createCatalogJob']>>, 'idempotencyHonoured'>>('/v1/catalog-jobs', { json: request }, options);
  }
  download(url: string): Promise<Download> {
    return fetchDownload(url, {}, this.opts.timeoutMs ?? 60_000);
  }
  async close(): Promise<void> {}
}
