/**
 * `GET /v1/generations/{id}`, the call clients make most (a poll every few seconds per job),
 * answered straight from node:http: Fastify's routing, reply and hooks cost about as much again
 * as the poll itself (`npm run bench -- team`, part a). Only plain requests take this way (an id
 * of id characters, no query string); every other shape goes through Fastify's route, which
 * answers it alike. Same rules as the route: authenticated and counted first, errors in the
 * spec's shape, one request line.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '../core/service';
import { errorResponse, type ServiceResponse } from '../core/error-response';
import type { RequestLine } from './logging';

/** What Fastify sends with an object it serialised itself. */
export const JSON_TYPE = 'application/json; charset=utf-8';

const PLAIN_POLL = /^\/v1\/generations\/([A-Za-z0-9_-]{1,128})$/;

/**
 * Answers `req` when it is a plain poll (returns true), else leaves it (false). `requestId` is
 * the request's checked x-request-id: it goes out with the answer's other headers in one
 * writeHead, so the plain poll needs no setHeader before it.
 */
export function fastPoll(
  service: Service,
  opts: { log?: (message: string) => void; requestLine?: RequestLine },
): (req: IncomingMessage, res: ServerResponse, requestId: string) => boolean {
  const { log, requestLine } = opts;

  async function poll(
    req: IncomingMessage,
    res: ServerResponse,
    id: string,
    requestId: string,
  ): Promise<void> {
    const started = performance.now();
    let response: ServiceResponse;
    try {
      const auth = await service.authorize(req.headers.authorization);
      response = await service.getGeneration(auth, id);
    } catch (err) {
      response = errorResponse(err, log);
    }
    try {
      answer(res, response, requestId);
    } catch (err) {
      log?.(`poll answer failed: ${err instanceof Error ? err.message : String(err)}`);
      res.destroy();
      return;
    }
    requestLine?.(req, res.statusCode, performance.now() - started);
  }

  return (req, res, requestId) => {
    if (req.method !== 'GET' || req.url === undefined) return false;
    const id = PLAIN_POLL.exec(req.url)?.[1];
    if (id === undefined) return false;
    void poll(req, res, id, requestId);
    return true;
  };
}

function answer(res: ServerResponse, response: ServiceResponse, requestId: string): void {
  const json = response.json ?? JSON.stringify(response.body);
  // A flat array: no header object to build and walk per poll.
  res.writeHead(response.status, [
    'content-type',
    JSON_TYPE,
    'content-length',
    String(Buffer.byteLength(json)),
    'x-request-id',
    requestId,
  ]);
  res.end(json);
}
