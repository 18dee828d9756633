/**
 * A stand-in S3 endpoint for tests: an HTTP proxy in front of an S3-compatible server that passes
 * every request through unchanged, except while `writesDown` is set: then every write (PUT, POST)
 * is answered as S3 answers when it is briefly unavailable, 503 SlowDown (the SDK retries it a
 * few times itself, then throws), and counted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type UnavailableProxy = {
  endpoint: string;
  writesDown: boolean;
  /** Writes refused so far. */
  refused: number;
  close(): Promise<void>;
};

const SLOW_DOWN =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';

export async function startUnavailableProxy(upstream: string): Promise<UnavailableProxy> {
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    if (proxy.writesDown && (req.method === 'PUT' || req.method === 'POST')) {
      proxy.refused++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' }).end(SLOW_DOWN);
      return;
    }
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
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const proxy: UnavailableProxy = {
    endpoint: `http://127.0.0.1:${port}`,
    writesDown: false,
    refused: 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
