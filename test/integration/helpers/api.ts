/**
 * Black-box HTTP client for the /v1 API plus a per-test server fixture (unique temp data dir,
 * port 0, loopback only). Uses global fetch; no knowledge of the implementation beyond
 * `startServer`'s documented options.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read deep in assertions, checked by the expectations themselves
export type Json = Record<string, any>;

export type ApiResponse = {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or null when the body is not JSON. */
  body: Json;
  isJson: boolean;
};

export type RequestOptions = {
  json?: unknown;
  /** Raw body (sent as-is); `contentType` sets its Content-Type. */
  raw?: Buffer | string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Override the Authorization header; `null` sends none. */
  auth?: string | null;
  signal?: AbortSignal;
};

export async function request(
  baseUrl: string,
  method: string,
  p: string,
  key: string | null,
  opts: RequestOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const auth = opts.auth !== undefined ? opts.auth : key ? `Bearer ${key}` : null;
  if (auth !== null) headers.authorization = auth;
  let body: string | Buffer | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] = opts.contentType ?? 'application/json';
  } else if (opts.raw !== undefined) {
    body = opts.raw;
    if (opts.contentType) headers['content-type'] = opts.contentType;
  }
  const res = await fetch(`${baseUrl}${p}`, {
    method,
    headers,
    body: body as BodyInit | undefined,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const text = await res.text();
  let parsed: Json = {};
  let isJson = false;
  try {
    parsed = JSON.parse(text) as Json;
    isJson = typeof parsed === 'object' && parsed !== null;
  } catch {
    parsed = {};
  }
  return { status: res.status, headers: res.headers, text, body: parsed, isJson };
}

/** A client bound to one base URL and one API key. */
export class Api {
  constructor(
    readonly baseUrl: string,
    readonly key: string | null,
    /** When set (including null = no header), replaces the `Bearer <key>` header. */
    private readonly authOverride?: string | null,
  ) {}
  withKey(key: string | null): Api {
    return new Api(this.baseUrl, key);
  }
  /** Same server, but send exactly this Authorization header (null: none). */
  withAuth(auth: string | null): Api {
    return new Api(this.baseUrl, this.key, auth);
  }
  private req(method: string, p: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const o =
      this.authOverride !== undefined && opts.auth === undefined
        ? { ...opts, auth: this.authOverride }
        : opts;
    return request(this.baseUrl, method, p, this.key, o);
  }
  get(p: string, opts?: RequestOptions): Promise<ApiResponse> {
    return this.req('GET', p, opts);
  }
  post(p: string, json?: unknown, opts: RequestOptions = {}): Promise<ApiResponse> {
    return this.req('POST', p, json === undefined ? opts : { ...opts, json });
  }
  delete(p: string, opts?: RequestOptions): Promise<ApiResponse> {
    return this.req('DELETE', p, opts);
  }
  upload(
    bytes: Buffer,
    contentType = 'image/png',
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> {
    return this.req('POST', '/v1/uploads', { raw: bytes, contentType, headers });
  }
  /** Uploads and returns the public URL (asserting success). */
  async uploadUrl(bytes: Buffer, contentType = 'image/png'): Promise<string> {
    const res = await this.upload(bytes, contentType);
    expectSuccess(res, 200);
    expect(typeof res.body.url).toBe('string');
    return res.body.url as string;
  }
  async balance(): Promise<number> {
    const res = await this.get('/v1/account');
    expectSuccess(res, 200);
    return res.body.diamondBalance as number;
  }
  generate(body: Json, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.post('/v1/generations', body, headers ? { headers } : {});
  }
  /** Submits a generation that must be accepted (202) and returns the job id. */
  async submit(body: Json): Promise<string> {
    const res = await this.generate(body);
    expectSuccess(res, 202);
    expect(res.body.status).toBe('processing');
    expect(typeof res.body.id).toBe('string');
    return res.body.id as string;
  }
  /** Polls GET /v1/generations/{id} until the job is completed or failed. */
  async waitForJob(id: string, timeoutMs = 45_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    let delay = 100;
    let last: Json = {};
    while (Date.now() < deadline) {
      const res = await this.get(`/v1/generations/${encodeURIComponent(id)}`);
      expectSuccess(res, 200);
      last = res.body;
      if (last.status === 'completed' || last.status === 'failed') return last;
      await sleep(delay);
      delay = Math.min(delay * 1.5, 600);
    }
    throw new Error(`job ${id} still not finished after ${timeoutMs} ms: ${JSON.stringify(last)}`);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Success shape: `{ success: true, ... }` with the expected status. */
export function expectSuccess(res: ApiResponse, status: number): void {
  if (res.status !== status || res.body.success !== true) {
    throw new Error(
      `expected ${status} {success:true}, got ${res.status}: ${res.text.slice(0, 600)}`,
    );
  }
}

/** Error shape: `{ success: false, error: <non-empty string> }` with the status and message parts (case-insensitive). */
export function expectError(
  res: ApiResponse,
  status: number | number[],
  ...parts: (string | number)[]
): void {
  const statuses = Array.isArray(status) ? status : [status];
  if (!statuses.includes(res.status)) {
    throw new Error(
      `expected status ${statuses.join(' or ')}, got ${res.status}: ${res.text.slice(0, 600)}`,
    );
  }
  expect(res.isJson, `error body must be JSON: ${res.text.slice(0, 200)}`).toBe(true);
  expect(res.body.success).toBe(false);
  expect(typeof res.body.error).toBe('string');
  expect((res.body.error as string).length).toBeGreaterThan(0);
  for (const part of parts) {
    expect((res.body.error as string).toLowerCase()).toContain(String(part).toLowerCase());
  }
}

/** Downloads a result or upload URL. Sends the caller's key too (harmless for public URLs). */
export async function download(
  url: string,
  key?: string | null,
): Promise<{ status: number; contentType: string; bytes: Buffer }> {
  const res = await fetch(url, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', bytes };
}

export function makeTempDir(tag = ''): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-${tag}`));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** A tiny loopback HTTP server used as a "remote" image host for URL inputs. */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
export async function startHost(
  handler: Handler,
): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const srv = http.createServer(handler);
  srv.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        srv.close(() => resolve());
      }),
  };
}
