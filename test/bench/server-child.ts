/**
 * A server for the benchmarks, in its own process so the load generator does not share its
 * event loop: `real <dataDir>` runs the Dropshoot /v1 server; `bare <status> <bodyFile>` answers
 * every request with the same bytes from a plain node:http handler.
 */
import fs from 'node:fs';
import http from 'node:http';
import { startServer } from '../../src/server';

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'real') {
  const server = await startServer({ dataDir: rest[0]!, host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
} else if (mode === 'bare') {
  const body = fs.readFileSync(rest[1]!);
  const status = Number(rest[0]);
  const server = http.createServer((_req, res) => {
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
  throw new Error('usage: server-child real <dataDir> | bare <status> <bodyFile>');
}
