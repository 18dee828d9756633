/**
 * A stand-in for a connection pooler in transaction mode, as LISTEN sees it: a TCP proxy in front
 * of PostgreSQL that passes everything through, except that while `deaf` is set it drops the
 * server's NotificationResponse messages ('A'), so a LISTEN is accepted but hears nothing.
 * The client must not ask for TLS (the server's messages are read as plain protocol frames).
 */
import net from 'node:net';

export type DeafProxy = {
  /** `url` with its host and port pointing at the proxy. */
  url: string;
  deaf: boolean;
  /** Connections made through the proxy so far. */
  connections: number;
  close(): Promise<void>;
};

export async function startDeafProxy(upstreamUrl: string): Promise<DeafProxy> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    proxy.connections++;
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    client.pipe(server);
    // Server to client: whole frames (type byte, int32 length counting itself, body).
    let pending = Buffer.alloc(0);
    server.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const out: Buffer[] = [];
      while (pending.length >= 5) {
        const size = 1 + pending.readInt32BE(1);
        if (pending.length < size) break;
        const frame = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (!(proxy.deaf && frame[0] === 0x41)) out.push(frame);
      }
      if (out.length > 0) client.write(Buffer.concat(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const proxy: DeafProxy = {
    url: url.toString(),
    deaf: false,
    connections: 0,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
