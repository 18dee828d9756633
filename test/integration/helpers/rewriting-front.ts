/**
 * A loopback front for a service under test: every request is passed on as it came, and its
 * answer may be rewritten (status, headers, body) before it goes back, as a gateway, a framework
 * or a CDN in front of a real service would (a Retry-After added or dropped, a redirect).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FrontAnswer = { status: number; headers: http.OutgoingHttpHeaders; body: Buffer };

/** The front's base URL; closed with the test's cleanups. */
export async function rewritingFront(
  cleanups: (() => Promise<void> | void)[],
  target: string,
  rewrite: (request: { method: string; path: string }, answer: FrontAnswer) => FrontAnswer,
): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', target);
      const upstream = http.request(
        url,
        { method: req.method, headers: { ...req.headers, host: url.host } },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            const out = rewrite(
              { method: req.method ?? 'GET', path: url.pathname },
              {
                status: answer.statusCode ?? 502,
                headers: { ...answer.headers },
                body: Buffer.concat(body),
              },
            );
            // The body may have changed size: the length is the new body's.
            const headers = { ...out.headers, 'content-length': out.body.length };
            delete headers['transfer-encoding'];
            res.writeHead(out.status, headers).end(out.body);
          });
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
