/**
 * A stand-in S3 endpoint for tests: an HTTP proxy in front of an S3-compatible server that passes
 * every request and answer through unchanged (path-style S3 needs nothing more), except the body
 * of a GET of one armed object key: it forwards the first `forwardBytes` of that body, then holds
 * the rest until `resume()`. Lets a test see whether a reader of the bucket passes bytes on before
 * it has the whole object.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type HeldGet = {
  /** Resolves once the proxy has forwarded `forwardBytes` of the object and is holding the rest. */
  holding: Promise<void>;
  /** Body bytes forwarded so far. */
  forwarded(): number;
  /** Lets the rest of the body through. */
  resume(): void;
};

export type PacingProxy = {
  /** The proxy's URL, to use as the S3 endpoint. */
  endpoint: string;
  /** Holds the body of the next GET whose path ends with `/${keySuffix}` after `forwardBytes`. */
  holdNextGet(keySuffix: string, forwardBytes: number): HeldGet;
  close(): Promise<void>;
};

type Armed = {
  keySuffix: string;
  forwardBytes: number;
  sent: number;
  reachedHold: () => void;
  released: Promise<void>;
};

export async function startPacingProxy(upstream: string): Promise<PacingProxy> {
  const target = new URL(upstream);
  let armed: Armed | undefined;

  const server = http.createServer((req, res) => {
    const pace =
      armed &&
      req.method === 'GET' &&
      (req.url ?? '').split('?')[0]!.endsWith(`/${armed.keySuffix}`)
        ? armed
        : undefined;
    if (pace) armed = undefined; // one GET only
    const out = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers, // Host included: it is part of what SigV4 signs
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        if (!pace || answer.statusCode !== 200) {
          answer.pipe(res);
          return;
        }
        forwardPaced(answer, res, pace).catch(() => res.destroy());
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  // Keep-alive sockets of the SDK would hold close() open.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    holdNextGet(keySuffix, forwardBytes) {
      let reachedHold!: () => void;
      let resume!: () => void;
      const holding = new Promise<void>((r) => (reachedHold = r));
      const released = new Promise<void>((r) => (resume = r));
      const entry: Armed = { keySuffix, forwardBytes, sent: 0, reachedHold, released };
      armed = entry;
      return { holding, forwarded: () => entry.sent, resume };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Copies `answer` to `res`, stopping after `pace.forwardBytes` until the test releases it. */
async function forwardPaced(
  answer: http.IncomingMessage,
  res: http.ServerResponse,
  pace: Armed,
): Promise<void> {
  let held = false;
  for await (const chunk of answer as AsyncIterable<Buffer>) {
    let rest = chunk;
    if (!held) {
      const room = pace.forwardBytes - pace.sent;
      const now = rest.subarray(0, Math.max(0, room));
      if (now.length > 0) {
        await write(res, now);
        pace.sent += now.length;
      }
      rest = rest.subarray(now.length);
      if (pace.sent >= pace.forwardBytes) {
        held = true;
        pace.reachedHold();
        await pace.released;
      }
    }
    if (rest.length > 0) {
      await write(res, rest);
      pace.sent += rest.length;
    }
  }
  res.end();
}

function write(res: http.ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    res.write(chunk, (err) => (err ? reject(err) : resolve()));
  });
}
