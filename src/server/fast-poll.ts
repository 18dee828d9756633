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

export function fastPoll(
  service: Service,
  opts: { log?: (message: string) => void; requestLine?: RequestLine },
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET' || req.url === undefined) return false;
    const id = PLAIN_POLL.exec(req.url)?.[1];
    if (id === undefined) return false;
    const started = performance.now();
    service
      .authorize(req.headers.authorization)
      .then((auth) => service.getGeneration(auth, id))
      .catch((err: unknown) => errorResponse(err, opts.log))
      .then((response) => answer(res, response))
      .then(
        () => opts.requestLine?.(req, res.statusCode, performance.now() - started),
        (err: unknown) => {
          opts.log?.(`poll answer failed: ${err instanceof Error ? err.message : String(err)}`);
          res.destroy();
        },
      );
    return true;
  };
}

function answer(res: ServerResponse, response: ServiceResponse): void {
  const json = response.json ?? JSON.stringify(response.body);
  res.writeHead(response.status, {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}
