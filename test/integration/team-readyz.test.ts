/**
 * `GET /readyz` on PostgreSQL (issue 14 item 6): 200 while the database answers; 503 naming the
 * database (never its password) while it does not, so a balancer takes the process out; 200 again
 * once it is back, without a restart. `GET /healthz` (alive) stays 200 throughout. The database
 * is reached through a TCP proxy on loopback that the test closes (every connection cut, new ones
 * refused) and opens again on the same port.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server';
import { describePostgres } from '../support/postgres';
import { makeTempDir, removeDir } from './helpers/api';

type CuttableProxy = { url: string; cut(): Promise<void>; restore(): Promise<void> };

/** A pass-through TCP proxy to the database of `upstreamUrl`; `url` is that URL through it. */
async function startCuttableProxy(upstreamUrl: string): Promise<CuttableProxy> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const db = net.connect(Number(upstream.port || 5432), upstream.hostname);
    for (const s of [client, db]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => db.destroy());
    db.on('close', () => client.destroy());
    client.pipe(db);
    db.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    restore: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
  };
}

describePostgres('readiness on PostgreSQL', (databaseUrl) => {
  let proxy: CuttableProxy;
  let server: RunningServer;
  let dir: string;

  beforeAll(async () => {
    proxy = await startCuttableProxy(databaseUrl());
    const url = new URL(proxy.url);
    url.searchParams.set('schema', `readyz_${randomBytes(5).toString('hex')}`);
    dir = makeTempDir('team-readyz-');
    server = await startServer({ dataDir: dir, databaseUrl: url.toString(), port: 0 });
  });

  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await server?.close();
    if (dir) removeDir(dir);
  });

  const get = async (path: string) => {
    const res = await fetch(`${server.url}${path}`);
    return { status: res.status, text: await res.text() };
  };

  it('answers 503 naming the database while it is unreachable, and 200 again once it is back', async () => {
    const up = await get('/readyz');
    expect(up.status, up.text).toBe(200);
    expect(JSON.parse(up.text)).toMatchObject({ checks: { database: 'ok', blobs: 'ok' } });

    await proxy.cut();
    const down = await get('/readyz');
    expect(down.status, down.text).toBe(503);
    const body = JSON.parse(down.text) as { checks: { database: string; blobs: string } };
    expect(body.checks.database).toMatch(/^unreachable: /);
    expect(body.checks.blobs).toBe('ok');
    const password = decodeURIComponent(new URL(databaseUrl()).password);
    if (password) expect(down.text).not.toContain(password);
    // Alive all the same: only readiness takes the process out of the balancer.
    expect((await get('/healthz')).status).toBe(200);

    await proxy.restore();
    const deadline = Date.now() + 10_000;
    let again = await get('/readyz');
    while (again.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await get('/readyz');
    }
    expect(again.status, again.text).toBe(200);
  });
});
