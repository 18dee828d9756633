/**
 * A /v1 service written from /work/shared/spec/service-api.md alone (nothing from src/), with
 * switches for what a production service may do where the spec is silent or loose. Tests and
 * the soak campaign run Dropshoot's studio against it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { ReferenceCore, type Reply } from './core';
import { DEFAULTS, ReferenceServiceOptionsSchema, type ReferenceServiceOptions } from './options';
import type { LedgerEntry } from './state';
import { adminRoutes } from './admin';
import { RequestLog, type LoggedRequest } from './request-log';
import { fileIdOfPath, s3Error } from './result-urls';

export type { ReferenceServiceOptions } from './options';
export type { LedgerEntry } from './state';
export type { LoggedRequest } from './request-log';

export type ReferenceService = {
  /** Base URL without /v1. */
  url: string;
  /** Where results are served when `resultsOnOtherHost` (another loopback port). */
  resultsUrl: string;
  createAccount(input: { email: string; diamonds: number; dailyCap?: number }): { apiKey: string };
  grant(email: string, diamonds: number): void;
  balance(email: string): number;
  ledger(email: string): LedgerEntry[];
  jobs(email: string): ReferenceJob[];
  requestsToday(apiKey: string): number;
  setDailyCap(apiKey: string, cap: number): void;
  /** Finished jobs: run time, and the delay until a poll first reported them final (null: never). */
  timings(email: string): { id: string; durationMs: number; collectedAfterMs: number | null }[];
  /** Every request seen (admin routes aside), oldest first. */
  requests(): LoggedRequest[];
  /** Result downloads only. */
  resultRequests(): LoggedRequest[];
  /** Switch faults on/off mid-test (seed and statePath are fixed at start). */
  setOptions(patch: Partial<ReferenceServiceOptions>): void;
  close(): Promise<void>;
};

export type ReferenceJob = {
  id: string;
  kind: 'generation' | 'catalog';
  toolId: string | null;
  status: string;
  charged: number;
  refunded: number;
  createdAt: string;
  request: unknown;
  /** Results made (catalog jobs: completed shots). */
  results: number;
  errorMessage: string | null;
};

/** For main.ts: fixed ports (so URLs survive a restart) and the /_ref admin routes. */
export type ServeOptions = {
  host?: string;
  port?: number;
  resultsPort?: number;
  adminToken?: string;
};

const send = (res: http.ServerResponse, reply: Reply, extraFields: boolean) => {
  if (reply.raw) {
    res.writeHead(reply.status, { 'content-type': reply.raw.contentType }).end(reply.raw.text);
    return;
  }
  const body = extraFields ? withExtraFields(reply.body) : reply.body;
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    ...(reply.headers ?? {}),
  });
  res.end(JSON.stringify(body));
};

/** Unknown fields on the body and on every entry of its lists (never inside `images`). */
function withExtraFields(body: Record<string, unknown>): Record<string, unknown> {
  const tag = (o: Record<string, unknown>) => ({
    ...o,
    _rev: 7,
    region: 'ref-eu-1',
    links: { self: null },
  });
  return tag(
    Object.fromEntries(
      Object.entries(body).map(([k, v]) => [
        k,
        Array.isArray(v)
          ? v.map((e) =>
              e && typeof e === 'object' && !Array.isArray(e)
                ? tag(e as Record<string, unknown>)
                : e,
            )
          : v,
      ]),
    ),
  );
}

/** The body, keeping at most limit + 1 bytes (enough to tell that it was too large). */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit, keep reading (so the 413 reaches the client) but keep nothing more.
      const kept = size - chunk.length;
      if (kept <= limit) chunks.push(chunk.subarray(0, limit + 1 - kept));
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const listen = (server: http.Server, host: string, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });

export async function startReferenceService(
  options: ReferenceServiceOptions = {},
  serve: ServeOptions = {},
): Promise<ReferenceService> {
  const opts = ReferenceServiceOptionsSchema.parse(options);
  const host = serve.host ?? '127.0.0.1';
  const core = new ReferenceCore(opts, { base: '', results: '' });
  const catalogImages = new Map<string, Buffer>();

  /** A stored file; result downloads (not uploads) first pass the result-link checks. */
  const serveFile = (res: http.ServerResponse, url: URL, octet: boolean) => {
    const id = fileIdOfPath(url.pathname);
    const meta = id ? core.store.state.files[id] : undefined;
    const bytes = id && meta ? core.store.readFile(id) : null;
    if (!id || !bytes || !meta) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: false, error: 'Not found' }));
      return;
    }
    const refusal = url.pathname.startsWith('/files/')
      ? core.uploadExpired(id)
        ? s3Error('AccessDenied', 'Request has expired')
        : null
      : core.links.refusal(id, url.searchParams);
    if (refusal) {
      res.writeHead(refusal.status, { 'content-type': refusal.contentType }).end(refusal.text);
      return;
    }
    const result = !url.pathname.startsWith('/files/');
    const readableAt = result ? core.resultReadableAt(id) : null;
    if (readableAt !== null && Date.now() < readableAt) {
      // resultFilesNotYetMs: the object store does not serve the new file yet.
      if (core.options.resultFilesNotYetAs === '202') {
        res
          .writeHead(202, { 'content-type': 'application/json' })
          .end(JSON.stringify({ success: true, status: 'processing' }));
        return;
      }
      res
        .writeHead(404, { 'content-type': 'application/xml' })
        .end(
          '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>',
        );
      return;
    }
    const cut = core.options.truncateResultBodies ?? 0;
    if (result && (cut < 0 || truncated < cut)) {
      // truncateResultBodies: more bytes announced than sent, then the connection closes.
      truncated++;
      res.writeHead(200, {
        'content-type': octet ? 'application/octet-stream' : meta.mime,
        'content-length': bytes.length + 5000,
      });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    const trickle = core.options.resultTrickle;
    if (result && trickle) {
      // resultTrickle: a slow link, the body arriving a chunk at a time.
      res.writeHead(200, {
        'content-type': octet ? 'application/octet-stream' : meta.mime,
        'content-length': bytes.length,
      });
      let sent = 0;
      const size = Math.max(1, Math.ceil(bytes.length / trickle.chunks));
      const timer = setInterval(() => {
        const chunk = bytes.subarray(sent, sent + size);
        sent += chunk.length;
        if (sent >= bytes.length) {
          clearInterval(timer);
          res.end(chunk);
        } else res.write(chunk);
      }, trickle.everyMs);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res
      .writeHead(200, {
        'content-type': octet ? 'application/octet-stream' : meta.mime,
        'content-length': bytes.length,
      })
      .end(bytes);
  };
  let truncated = 0;
  /** Where a /v1/files/ result redirects to (resultFilesRedirect), or null to serve it. */
  const fileRedirect = (url: URL, id: string): string | null => {
    switch (core.options.resultFilesRedirect) {
      case 'self':
        return `${url.pathname}${url.search}`;
      case 'otherHost':
        return `${core.urls.results}/blob/${id}`;
      case 'v1Once':
        return url.pathname === `/v1/files/${id}` ? null : `/v1/files/${id}`;
      case 'v1Endless':
        return `${url.pathname}?hop=${Number(url.searchParams.get('hop') ?? 0) + 1}`;
      default:
        return null;
    }
  };

  const log = new RequestLog();
  const admin = serve.adminToken ? adminRoutes(core, serve.adminToken, log) : null;
  const kindOf = (pathname: string): LoggedRequest['kind'] =>
    pathname.startsWith('/v1/') && !pathname.startsWith('/v1/files/')
      ? 'api'
      : pathname.startsWith('/files/')
        ? 'upload'
        : /^\/(?:results|blob|v1\/files)\//.test(pathname)
          ? 'result'
          : 'other';

  const main = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://ref.invalid');
      core.advance();
      if (url.pathname.startsWith('/_ref/') && admin)
        return admin(req, res, url, await readBody(req, DEFAULTS.jsonBytes));
      log.watch(req, res, kindOf(url.pathname));
      if (url.pathname.startsWith('/files/') || url.pathname.startsWith('/results/'))
        return serveFile(res, url, false);
      if (url.pathname.startsWith('/catalog/')) {
        const id = url.pathname.slice('/catalog/'.length);
        let png = catalogImages.get(id);
        if (!png) {
          let h = 0;
          for (const ch of id) h = (Math.imul(h, 33) + ch.charCodeAt(0)) >>> 0;
          png = await sharp({
            create: {
              width: 64,
              height: 80,
              channels: 3,
              background: { r: h & 255, g: (h >> 8) & 255, b: (h >> 16) & 255 },
            },
          })
            .png()
            .toBuffer();
          catalogImages.set(id, png);
        }
        res.writeHead(200, { 'content-type': 'image/png' }).end(png);
        return;
      }
      if (!url.pathname.startsWith('/v1/'))
        return send(res, { status: 404, body: { success: false, error: 'Not found' } }, false);
      const gate = core.gate(req.headers.authorization);
      if ('reply' in gate) {
        req.resume();
        return send(res, gate.reply, core.options.extraFields === true);
      }
      // Results behind the caller's key (resultUrlsNeedKey): counted like any /v1 call.
      if (url.pathname.startsWith('/v1/files/')) {
        req.resume();
        const id = fileIdOfPath(url.pathname);
        if (req.method === 'GET' && id && core.ownsFile(gate.caller.email, id)) {
          const to = fileRedirect(url, id);
          if (to === null) return serveFile(res, url, false);
          res.writeHead(302, { location: to }).end();
          return;
        }
        return send(res, { status: 404, body: { success: false, error: 'Not found' } }, false);
      }
      const isUpload = req.method === 'POST' && url.pathname === '/v1/uploads';
      const body = await readBody(req, isUpload ? DEFAULTS.uploadBytes : DEFAULTS.jsonBytes);
      if (!isUpload && body.length > DEFAULTS.jsonBytes)
        return send(
          res,
          { status: 413, body: { success: false, error: 'Request body too large' } },
          core.options.extraFields === true,
        );
      const key = req.headers['idempotency-key'];
      const headers = { 'idempotency-key': typeof key === 'string' ? key : undefined };
      const reply = await core.handle(
        gate.caller,
        req.method ?? 'GET',
        url.pathname,
        url.searchParams,
        body,
        headers,
      );
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      const echo = core.options.echoIdempotencyKey ?? 'none';
      const echoed =
        headers['idempotency-key'] !== undefined &&
        ((echo === 'uploads' && isUpload) || (echo === 'all' && req.method !== 'GET'));
      send(
        res,
        echoed
          ? {
              ...reply,
              headers: { ...reply.headers, 'idempotency-key': headers['idempotency-key']! },
            }
          : reply,
        core.options.extraFields === true,
      );
    })().catch((err: unknown) => {
      if (!res.headersSent)
        send(
          res,
          {
            status: 500,
            body: {
              success: false,
              error: `internal error: ${err instanceof Error ? err.message : String(err)}`,
            },
          },
          false,
        );
      else res.destroy();
    });
  });
  const results = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://ref.invalid');
    log.watch(req, res, 'result');
    serveFile(res, url, true);
  });

  const mainPort = await listen(main, host, serve.port ?? 0);
  const resultsPort = await listen(results, host, serve.resultsPort ?? 0);
  core.urls = { base: `http://${host}:${mainPort}`, results: `http://${host}:${resultsPort}` };
  const ticker = setInterval(() => core.advance(), 20);
  core.advance();

  const close = (server: http.Server) =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });

  return {
    url: core.urls.base,
    resultsUrl: core.urls.results,
    createAccount: (input) => core.createAccount(input),
    grant: (email, diamonds) => core.grant(email, diamonds),
    balance: (email) => core.balance(email),
    ledger: (email) => core.ledger(email),
    jobs: (email) => core.jobsOf(email),
    requestsToday: (apiKey) => core.requestsToday(apiKey),
    setDailyCap: (apiKey, cap) => core.setDailyCap(apiKey, cap),
    timings: (email) => core.timings(email),
    requests: () => [...log.entries],
    resultRequests: () => log.entries.filter((e) => e.kind === 'result'),
    setOptions: (patch) => {
      const checked = ReferenceServiceOptionsSchema.partial().parse(patch);
      core.options = {
        ...core.options,
        ...checked,
        seed: core.options.seed,
        statePath: core.options.statePath,
      };
    },
    close: async () => {
      clearInterval(ticker);
      await Promise.all([close(main), close(results)]);
      await core.drain();
      core.store.dispose();
    },
  };
}
