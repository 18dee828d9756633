/**
 * A loopback front for a service under test: every request is passed on as it came, and its
 * answer may be rewritten (status, headers, body) before it goes back, as a gateway, a framework
 * or a CDN in front of a real service would (a Retry-After added or dropped, a redirect), or cut
 * (the connection dropped once the service has acted: the answer lost). A request may be held
 * before it is passed on (`holdMs`: it reaches the service late), or answered by the front itself
 * or passed on under another path (`route`: an API moved to a new address).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FrontAnswer = { status: number; headers: http.OutgoingHttpHeaders; body: Buffer };
export type FrontRequest = {
  method: string;
  path: string;
  /** The query, as `URLSearchParams`. */
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
};

/** The front's base URL; closed with the test's cleanups. */
export async function rewritingFront(
  cleanups: (() => Promise<void> | void)[],
  target: string,
  rewrite: (request: FrontRequest, answer: FrontAnswer) => FrontAnswer | 'cut',
  opts: {
    holdMs?: (request: FrontRequest) => number;
    route?: (request: FrontRequest) => FrontAnswer | { path: string } | undefined;
  } = {},
): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', target);
      const request: FrontRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      const routed = opts.route?.(request);
      if (routed && 'status' in routed)
        return void res.writeHead(routed.status, routed.headers).end(routed.body);
      if (routed) {
        url.pathname = routed.path;
        request.path = routed.path;
      }
      setTimeout(() => passOn(url, request), opts.holdMs?.(request) ?? 0);
    });
    const passOn = (url: URL, request: FrontRequest) => {
      const upstream = http.request(
        url,
        { method: req.method, headers: { ...req.headers, host: url.host } },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            const out = rewrite(request, {
              status: answer.statusCode ?? 502,
              headers: { ...answer.headers },
              body: Buffer.concat(body),
            });
            if (out === 'cut') return void req.socket.destroy();
            // The body may have changed size: the length is the new body's.
            const headers = { ...out.headers, 'content-length': out.body.length };
            delete headers['transfer-encoding'];
            res.writeHead(out.status, headers).end(out.body);
          });
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(request.body);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
