/**
 * A seeded fault proxy in front of any /v1 service: per request, at most one fault drawn with
 * the given probabilities, and a log of what it did (so a checker can tell a lost answer from a
 * refused request). Paths outside /v1/ pass untouched.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SeededRandom } from './random';

export const FAULT_NAMES = [
  'error500Before',
  'error500After',
  'dropAfter',
  'resetBefore',
  'stallMs',
  'rateLimit429',
  'insufficient402',
  'unavailable503',
  'unauthorized401',
  'planPaused403',
] as const;
export type FaultName = (typeof FAULT_NAMES)[number];
/**
 * Probability of each fault per request (their sum at most 1):
 * - error500Before: 500 without forwarding
 * - error500After: forward, discard the real answer, answer 500
 * - dropAfter: forward, then destroy the client socket (the answer is lost, the request went through)
 * - resetBefore: destroy the socket without forwarding
 * - stallMs: hold the request for `stallHoldMs`, then reset (not forwarded)
 * - rateLimit429: 429 with Retry-After (not forwarded)
 * - insufficient402: 402 in the spec's message form (not forwarded)
 * - unavailable503: 503 'Service temporarily unavailable' with Retry-After (not forwarded: a
 *   gateway or an overloaded service turning the request away; spec §7 names no 503)
 * - unauthorized401: 401 in the spec's words (not forwarded: a key store hiccup)
 * - planPaused403: 403 naming a paused plan (not forwarded: spec 2.9/3.3 list the plan states and
 *   name no status for a call a plan's state gates)
 */
export type Faults = Partial<Record<FaultName, number>>;
export type FaultProxyOptions = {
  /** Base URL of the service (without /v1). */
  target: string;
  seed?: number;
  faults?: Faults;
  stallHoldMs?: number;
  retryAfterSeconds?: number;
  /** Return false to exempt a request from a drawn fault (it is then forwarded untouched). */
  allow?: (fault: FaultName, method: string, path: string) => boolean;
  /** A fault chosen for this request by the caller (a test aiming at one request); undefined: drawn as usual. */
  choose?: (method: string, path: string) => FaultName | null | undefined;
  port?: number;
};
export type FaultLogEntry = {
  seq: number;
  at: string;
  method: string;
  path: string;
  fault: FaultName | null;
  forwarded: boolean;
  upstreamStatus: number | null;
};
export type FaultProxy = {
  url: string;
  log: FaultLogEntry[];
  setFaults(faults: Faults): void;
  /** Points the proxy at another target (a restarted service on a new port). */
  setTarget(target: string): void;
  close(): Promise<void>;
};

type Upstream = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

function forward(target: string, req: http.IncomingMessage, body: Buffer): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url ?? '/', target);
    const headers = { ...req.headers, host: url.host };
    delete headers['content-length'];
    delete headers.connection;
    const upstream = http.request(
      url,
      { method: req.method, headers: { ...headers, 'content-length': String(body.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}

const readAll = (req: http.IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const rng = new SeededRandom(options.seed ?? 1);
  let faults: Faults = { ...(options.faults ?? {}) };
  let target = options.target;
  const log: FaultLogEntry[] = [];
  const sockets = new Set<Socket>();
  const stalls = new Set<NodeJS.Timeout>();

  const draw = (): FaultName | null => {
    let r = rng.next();
    for (const name of FAULT_NAMES) {
      const p = faults[name] ?? 0;
      if (r < p) return name;
      r -= p;
    }
    return null;
  };
  const json = (
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const method = req.method ?? 'GET';
      const path = new URL(req.url ?? '/', 'http://proxy.invalid').pathname;
      let fault = path.startsWith('/v1/') ? draw() : null;
      if (fault && options.allow && !options.allow(fault, method, path)) fault = null;
      const chosen = path.startsWith('/v1/') ? options.choose?.(method, path) : undefined;
      if (chosen !== undefined) fault = chosen;
      const entry: FaultLogEntry = {
        seq: log.length + 1,
        at: new Date().toISOString(),
        method,
        path,
        fault,
        forwarded: false,
        upstreamStatus: null,
      };
      log.push(entry);
      switch (fault) {
        case 'error500Before':
          return json(res, 500, {
            success: false,
            error: 'Internal server error (proxy, not forwarded)',
          });
        case 'resetBefore':
          return req.socket.destroy();
        case 'stallMs': {
          const timer = setTimeout(() => {
            stalls.delete(timer);
            req.socket.destroy();
          }, options.stallHoldMs ?? 3000);
          stalls.add(timer);
          return;
        }
        case 'rateLimit429': {
          const seconds = options.retryAfterSeconds ?? 1;
          return json(
            res,
            429,
            { success: false, error: `Too many requests; retry after ${seconds} seconds` },
            { 'retry-after': String(seconds) },
          );
        }
        case 'unavailable503':
          return json(
            res,
            503,
            { success: false, error: 'Service temporarily unavailable' },
            options.retryAfterSeconds === undefined
              ? {}
              : { 'retry-after': String(options.retryAfterSeconds) },
          );
        case 'unauthorized401':
          return json(res, 401, {
            success: false,
            error: 'Missing, malformed, invalid or revoked API key',
          });
        case 'planPaused403':
          return json(res, 403, {
            success: false,
            error: 'Your subscription is paused (plan status: paused)',
          });
        case 'insufficient402':
          return json(res, 402, {
            success: false,
            error: 'Insufficient diamonds: required 4, balance 0',
          });
        default:
          break;
      }
      let upstream: Upstream;
      try {
        upstream = await forward(target, req, body);
      } catch (err) {
        // The service itself is down: the client sees what a gateway would answer.
        return json(res, 502, {
          success: false,
          error: `upstream unreachable: ${err instanceof Error ? err.message : String(err)}`,
        });
      }
      entry.forwarded = true;
      entry.upstreamStatus = upstream.status;
      if (fault === 'error500After')
        return json(res, 500, {
          success: false,
          error: 'Internal server error (proxy, answer discarded)',
        });
      if (fault === 'dropAfter') return req.socket.destroy();
      const headers = { ...upstream.headers };
      delete headers['transfer-encoding'];
      delete headers.connection;
      res
        .writeHead(upstream.status, { ...headers, 'content-length': String(upstream.body.length) })
        .end(upstream.body);
    })().catch(() => req.socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    log,
    setFaults: (next) => {
      faults = { ...next };
    },
    setTarget: (next) => {
      target = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of stalls) clearTimeout(timer);
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
