/**
 * A server for the benchmarks, in its own process so the load generator does not share its
 * event loop: `real <dataDir>` runs the Dropshoot /v1 server; `bare <status> <bodyFile>` answers
 * every request with the same bytes from a plain node:http handler. `bare-shaped` answers as
 * serve's plain poll does (src/server/fast-poll.ts: a flat header array with a request id, the
 * body a string, after a microtask); `bare-spin <status> <bodyFile> <µs>` is `bare` after that
 * much busy CPU per request.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { startServer } from '../../src/server';
import { JSON_TYPE } from '../../src/server/fast-poll';

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'real') {
  const server = await startServer({ dataDir: rest[0]!, host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
} else if (mode === 'bare' || mode === 'bare-shaped' || mode === 'bare-spin') {
  const body = fs.readFileSync(rest[1]!);
  const json = body.toString();
  const status = Number(rest[0]);
  const spinMs = mode === 'bare-spin' ? Number(rest[2]) / 1000 : 0;
  const shaped = (res: http.ServerResponse) => {
    res.writeHead(status, [
      'content-type',
      JSON_TYPE,
      'content-length',
      String(Buffer.byteLength(json)),
      'x-request-id',
      randomUUID(),
    ]);
    res.end(json);
  };
  const server = http.createServer((_req, res) => {
    if (mode === 'bare-shaped') {
      void Promise.resolve(res).then(shaped);
      return;
    }
    for (const until = performance.now() + spinMs; performance.now() < until;);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
} else {
  throw new Error(
    'usage: server-child real <dataDir> | bare|bare-shaped <status> <bodyFile> | bare-spin <status> <bodyFile> <µs>',
  );
}
