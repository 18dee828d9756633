/**
 * The /v1 HTTP transport over the core's Service. Every /v1 request is authenticated and counted
 * in `onRequest`, before its body is read; bodies are size-limited while they stream in (1 MiB
 * JSON, 8 MiB uploads) and time-limited (headers, whole request, idle socket, keep-alive), so a
 * stalled or trickling client, authenticated or not, cannot hold a connection. Every error this
 * transport produces itself (bad URL, over-long id, timeout, header overflow, JSON nested too
 * deep) has the spec's `{success: false, error}` shape. Files and catalog assets are public GETs
 * at unguessable URLs.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { Readable } from 'node:stream';
import type { Socket } from 'node:net';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Core } from '../core';
import { errorResponse, type Authorized, type ServiceResponse } from '../core/service';
import { idempotencyFor } from '../core/idempotency';
import { PayloadTooLarge, BadRequest, ServiceError } from '../core/errors';
import { LIMITS } from '../shared/api';
import { mimeOfPath } from '../shared/media-types';
import { BlobMissing } from '../core/media/blob-content';
import { readiness } from './health';
import { lazyRequestLogger, requestIdFrom, requestLineWriter, type Logger } from './logging';
import { fastPoll, JSON_TYPE } from './fast-poll';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: Authorized;
  }
}

const send = (reply: FastifyReply, response: ServiceResponse) =>
  response.json === undefined
    ? reply.code(response.status).send(response.body)
    : reply.code(response.status).type(JSON_TYPE).send(response.json);
const authOf = (request: FastifyRequest): Authorized => {
  if (!request.auth) throw new Error('route reached without authorization');
  return request.auth;
};
const idemHeader = (request: FastifyRequest): string | undefined => {
  const value = request.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
};
/** Echoing the key tells clients this service honours it (the spec has no such header). */
const ackIdempotency = (reply: FastifyReply, idem: { key: string } | undefined) =>
  idem ? reply.header('idempotency-key', idem.key) : reply;

/** Connection limits; every one is a bound on how long a client may hold a socket. */
export type HttpTimeouts = {
  /** Until the request line and headers are complete. */
  headersMs: number;
  /** Until the whole request (headers and body) is received. */
  requestMs: number;
  /** A socket with no traffic at all in either direction. */
  idleMs: number;
  /** An idle keep-alive connection between requests. */
  keepAliveMs: number;
  /** Requests served on one keep-alive connection before it is closed. */
  maxRequestsPerSocket: number;
  /** How often incomplete requests are checked against headersMs and requestMs. */
  checkEveryMs: number;
};

export const DEFAULT_TIMEOUTS: HttpTimeouts = {
  headersMs: 15_000,
  // An 8 MB upload at 1 Mbit/s takes 64 s.
  requestMs: 120_000,
  // Above the time a create can spend fetching the caller's image URLs (10 s each).
  idleMs: 120_000,
  // Long enough that pooled client connections rarely race the close; clients hear it in Keep-Alive.
  keepAliveMs: 30_000,
  maxRequestsPerSocket: 10_000,
  checkEveryMs: 1_000,
};

/** Deeper JSON than this is refused before parsing (no request of ours nests more than 4). */
export const MAX_JSON_DEPTH = 64;

const failure = (error: string) => JSON.stringify({ success: false, error });

export type AppOptions = {
  log?: (message: string) => void;
  timeouts?: Partial<HttpTimeouts>;
  /** JSON request logs (one line per request, with its id); none when absent. */
  logger?: Logger;
};

export function buildApp(core: Core, opts: AppOptions = {}): FastifyInstance {
  const limits = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  const { service } = core;
  const logger = opts.logger;
  const fastifyLogger: FastifyBaseLogger | undefined = logger;
  const requestLine = logger ? requestLineWriter(logger) : undefined;
  const answerPoll = fastPoll(service, { log: opts.log, requestLine });
  // Set when close begins: from then on new requests are turned away (below).
  let closing = false;
  const app = Fastify({
    bodyLimit: LIMITS.jsonBodyBytes,
    ...(logger
      ? {
          loggerInstance: fastifyLogger,
          // Fastify's parent here is always `logger`; the lazy child needs its pino type.
          childLoggerFactory: (_parent, bindings) => lazyRequestLogger(logger, bindings),
          logController: new LogController({
            disableRequestLogging: true,
            requestIdLogLabel: 'requestId',
          }),
        }
      : { logger: false }),
    // A caller's x-request-id ties our log lines to theirs: the server factory below checks it
    // (or makes one when it is absent or malformed) and echoes it, and Fastify takes it from there.
    requestIdHeader: 'x-request-id',
    // Our own 503 while closing (in the server factory): Fastify's lacks the spec's error shape.
    return503OnClosing: false,
    // Ids up to 8 KiB reach the route (and get a JSON 404); longer ones get frameworkErrors' 414.
    routerOptions: { maxParamLength: 8192 },
    // Fastify applies its own timeout options only to servers it creates; this one sets them all.
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          headersTimeout: limits.headersMs,
          requestTimeout: limits.requestMs,
          connectionsCheckingInterval: limits.checkEveryMs,
          keepAliveTimeout: limits.keepAliveMs,
        },
        (req, res) => {
          // Here rather than in a Fastify hook: every response carries it, at no per-hook cost
          // (the plain poll writes it with its other headers).
          const id = requestIdFrom(req.headers['x-request-id']);
          req.headers['x-request-id'] = id;
          if (!closing && answerPoll(req, res, id)) return;
          res.setHeader('x-request-id', id);
          if (closing) return turnAway(req, res);
          handler(req, res);
        },
      );
      server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
      server.setTimeout(limits.idleMs);
      return server;
    },
    // Errors the router raises before any route runs: authenticated and counted like any /v1 call.
    frameworkErrors: (err, request, reply) => {
      const tooLong = err.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const answer = () =>
        send(reply, {
          status: tooLong ? 414 : 400,
          body: {
            success: false,
            error: tooLong
              ? 'The path is too long: ids are at most 8192 characters'
              : 'The URL is malformed',
          },
        });
      if (!request.url.startsWith('/v1/')) return answer();
      service
        .authorize(request.headers.authorization)
        .then(answer, (authError: unknown) => send(reply, errorResponse(authError, opts.log)));
      return reply;
    },
    // Errors of the HTTP parser and the timeouts above, before Fastify sees a request.
    clientErrorHandler: (err: Error & { code?: string }, socket: Socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, message] =
        err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request timeout: the request was not received in time']
          : err.code === 'HPE_HEADER_OVERFLOW'
            ? [431, 'Request headers (or the URL) are too large']
            : [400, 'Malformed HTTP request'];
      const body = failure(message);
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  });

  // JSON nested thousands deep overflows the parser's stack (a 500); count the depth first.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
      return done(
        new BadRequest(`Malformed JSON: nested deeper than ${MAX_JSON_DEPTH} levels`),
        undefined,
      );
    return parseJson(request, text, done);
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    if (err instanceof ServiceError) return send(reply, errorResponse(err));
    switch (err.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(
          reply,
          errorResponse(
            new PayloadTooLarge(
              request.url.startsWith('/v1/uploads')
                ? `Upload is larger than the 8 MB (${LIMITS.uploadBytes} bytes) limit`
                : `Request body is larger than the ${LIMITS.jsonBodyBytes} bytes limit`,
            ),
          ),
        );
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return send(
          reply,
          errorResponse(
            new BadRequest('Request body must be JSON (Content-Type: application/json)'),
          ),
        );
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return send(
          reply,
          errorResponse(new BadRequest('Request body is empty; send a JSON object')),
        );
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return send(reply, errorResponse(new BadRequest(`Malformed JSON: ${err.message}`)));
    }
    if (err instanceof SyntaxError || err.statusCode === 400) {
      return send(reply, errorResponse(new BadRequest(`Malformed request: ${err.message}`)));
    }
    return send(reply, errorResponse(err, opts.log));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ success: false, error: `Not found: ${request.method} ${request.url.split('?')[0]}` }),
  );

  /**
   * A request that arrives once close has begun (pipelined, or on a keep-alive connection busy at
   * that moment) gets a 503 and its connection is closed: the balancer sends it elsewhere.
   */
  function turnAway(req: http.IncomingMessage, res: http.ServerResponse): void {
    const body = failure('The server is shutting down; send the request again');
    res.writeHead(503, {
      'content-type': JSON_TYPE,
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
    requestLine?.(req, 503, 0);
  }

  // Draining: requests under way when close began are answered; Fastify closes only connections
  // idle at that moment, so the others are let go right after their answer, not kept alive 30 s.
  app.addHook('preClose', async () => {
    closing = true;
    app.server.keepAliveTimeout = 1;
  });
  if (requestLine) {
    // One line per request (Fastify's own logging writes two); never headers, so never a key.
    app.addHook('onResponse', (request, reply, done) => {
      requestLine(request.raw, reply.statusCode, reply.elapsedTime);
      done();
    });
  }

  app.get('/healthz', async () => ({ success: true, status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const state = await readiness(core);
    if (state.ready) return { success: true, status: 'ready', checks: state.checks };
    const reasons = Object.entries(state.checks)
      .filter(([, v]) => v !== 'ok')
      .map(([k, v]) => `${k} ${v}`);
    return reply
      .code(503)
      .send({ success: false, error: `Not ready: ${reasons.join('; ')}`, checks: state.checks });
  });

  // Public files: random ids, immutable content.
  app.get<{ Params: { id: string } }>('/files/:id', async (request, reply) => {
    const blob = /^[A-Za-z0-9_-]{1,64}$/.test(request.params.id)
      ? await core.blobs.get(request.params.id)
      : undefined;
    if (!blob) return reply.code(404).send({ success: false, error: 'File not found' });
    let body: Readable;
    try {
      body = await core.blobs.open(blob.sha256); // streamed from the store, never held whole
    } catch (err) {
      if (err instanceof BlobMissing) {
        opts.log?.(`file ${blob.id} has a row but no content: ${err.message}`);
        return reply.code(404).send({ success: false, error: 'File not found' });
      }
      opts.log?.(
        `file ${blob.id} could not be read: ${err instanceof Error ? err.message : String(err)}`,
      );
      return reply
        .code(503)
        .send({ success: false, error: 'File storage is unavailable; try again shortly' });
    }
    return reply
      .header('content-type', blob.mime)
      .header('content-length', blob.size)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(body);
  });
  app.get<{ Params: { '*': string } }>('/catalog/*', async (request, reply) => {
    const file = core.resolver.catalogFile(`/catalog/${request.params['*']}`);
    if (!file) return reply.code(404).send({ success: false, error: 'File not found' });
    const mime = mimeOfPath(file) ?? 'application/octet-stream';
    return reply
      .header('content-type', mime)
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .send(fs.createReadStream(core.catalog.filePath(file)));
  });

  app.register(
    async (v1) => {
      // Authenticate and count before the body is read (spec 8: before any other work).
      v1.addHook('onRequest', async (request, reply) => {
        try {
          request.auth = await service.authorize(request.headers.authorization);
        } catch (err) {
          return send(reply, errorResponse(err, opts.log));
        }
      });

      v1.get('/models', async (req, reply) => send(reply, await service.listModels(authOf(req))));
      v1.get('/fashion-models', async (req, reply) =>
        send(reply, await service.listFashionModels(authOf(req), req.query)),
      );
      v1.get('/venues', async (req, reply) =>
        send(reply, await service.listVenues(authOf(req), req.query)),
      );
      v1.get('/poses', async (req, reply) =>
        send(reply, await service.listPoses(authOf(req), req.query)),
      );
      v1.get('/account', async (req, reply) => send(reply, await service.getAccount(authOf(req))));

      v1.post('/generations', async (req, reply) => {
        const idem = idempotencyFor(
          'generations',
          idemHeader(req),
          JSON.stringify(req.body ?? null),
        );
        return send(
          ackIdempotency(reply, idem),
          await service.createGeneration(authOf(req), req.body, idem),
        );
      });
      v1.get<{ Params: { id: string } }>('/generations/:id', async (req, reply) =>
        send(reply, await service.getGeneration(authOf(req), req.params.id)),
      );

      v1.post('/template-sets', async (req, reply) =>
        send(reply, await service.createTemplateSet(authOf(req), req.body)),
      );
      v1.get('/template-sets', async (req, reply) =>
        send(reply, await service.listTemplateSets(authOf(req))),
      );
      v1.delete<{ Params: { id: string } }>('/template-sets/:id', async (req, reply) =>
        send(reply, await service.deleteTemplateSet(authOf(req), req.params.id)),
      );

      v1.get('/ready-template-sets', async (req, reply) =>
        send(reply, await service.listReadySets(authOf(req), req.query)),
      );
      v1.get<{ Params: { id: string } }>('/ready-template-sets/:id', async (req, reply) =>
        send(reply, await service.getReadySet(authOf(req), req.params.id)),
      );
      v1.post('/catalog-jobs', async (req, reply) => {
        const idem = idempotencyFor(
          'catalog-jobs',
          idemHeader(req),
          JSON.stringify(req.body ?? null),
        );
        return send(
          ackIdempotency(reply, idem),
          await service.createCatalogJob(authOf(req), req.body, idem),
        );
      });

      // Uploads: raw bytes of any declared type (the signature decides), limited while streaming.
      v1.register(async (uploads) => {
        uploads.removeAllContentTypeParsers();
        uploads.addContentTypeParser(
          '*',
          { parseAs: 'buffer', bodyLimit: LIMITS.uploadBytes },
          (_req, body, done) => done(null, body),
        );
        uploads.post('/uploads', async (req, reply) => {
          const data = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          const idem = idempotencyFor('uploads', idemHeader(req), data);
          return send(ackIdempotency(reply, idem), await service.upload(authOf(req), data, idem));
        });
      });
    },
    { prefix: '/v1' },
  );
  return app;
}

/** Whether `text` opens more than `max` arrays or objects inside each other (strings skipped). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
