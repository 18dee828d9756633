/**
 * A TCP proxy in front of PostgreSQL that cuts a connection at a creation's COMMIT, the way a
 * network drop, a failover or a pooler restart can: armed, the next COMMIT of a transaction that
 * inserted a job is
 * - 'after-commit': passed on, the server's answer dropped and the connection cut 150 ms later
 *   (the server has committed; the client hears only a lost connection);
 * - 'before-commit': not passed on, the connection cut (the server rolls back);
 * - 'commit-lost': not passed on, the client's side cut but the server's kept open, idle in its
 *   transaction and holding its locks, until `releaseHeld()` (then the server rolls back).
 * The client must not ask for TLS (its messages are read as plain protocol frames).
 */
import net from 'node:net';

export type CommitCut = 'after-commit' | 'before-commit' | 'commit-lost';

export type CommitCutProxy = {
  /** `url` with its host and port pointing at the proxy. */
  url: string;
  /** The cut the next creation's COMMIT gets; cleared once made. */
  armed: CommitCut | undefined;
  /** Cuts made so far. */
  cuts: number;
  /** Closes the server connections a 'commit-lost' cut kept open. */
  releaseHeld(): void;
  close(): Promise<void>;
};

export async function startCommitCutProxy(upstreamUrl: string): Promise<CommitCutProxy> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<net.Socket>();
  const held = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    let keepServer = false;
    client.on('close', () => {
      if (!keepServer) server.destroy();
    });
    server.on('close', () => client.destroy());
    let answering = true;
    server.on('data', (chunk: Buffer) => {
      if (answering) client.write(chunk);
    });
    // Client to server: the startup message (no type byte), then frames (type byte, int32 length
    // counting itself, body).
    let startup = true;
    let insertedJob = false;
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (startup) {
          if (pending.length < 4) return;
          const size = pending.readInt32BE(0);
          if (pending.length < size) return;
          server.write(pending.subarray(0, size));
          pending = pending.subarray(size);
          startup = false;
          continue;
        }
        if (pending.length < 5) return;
        const size = 1 + pending.readInt32BE(1);
        if (pending.length < size) return;
        const frame = pending.subarray(0, size);
        pending = pending.subarray(size);
        const text = frame.subarray(5).toString('latin1');
        if (/INSERT INTO jobs\b/.test(text)) insertedJob = true;
        const commit = frame[0] === 0x51 /* Query */ && /^COMMIT\b/i.test(text);
        if (commit && insertedJob && proxy.armed) {
          const cut = proxy.armed;
          proxy.armed = undefined;
          proxy.cuts++;
          answering = false;
          pending = Buffer.alloc(0);
          if (cut === 'after-commit') {
            server.write(frame);
            setTimeout(() => {
              client.destroy();
              server.destroy();
            }, 150);
          } else if (cut === 'before-commit') {
            client.destroy();
            server.destroy();
          } else {
            keepServer = true;
            held.add(server);
            client.destroy();
          }
          return;
        }
        if (commit) insertedJob = false;
        server.write(frame);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const proxy: CommitCutProxy = {
    url: url.toString(),
    armed: undefined,
    cuts: 0,
    releaseHeld() {
      for (const s of held) s.destroy();
      held.clear();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
