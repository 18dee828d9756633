/**
 * Connection limits of the /v1 server, driven with raw sockets on loopback: a client that stalls
 * in its headers, trickles its body or idles on a keep-alive connection is cut off with the spec's
 * error shape, whether or not it sent a valid key, and other clients are served meanwhile.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, type Api } from './helpers/api';
import { createAccount, type Account } from './helpers/cli';
import { startTestServer, type TestServer } from './helpers/server';

let srv: TestServer;
let acct: Account;
let api: Api;
let port: number;

beforeAll(async () => {
  // Short limits so the test sees them act; production defaults are in DEFAULT_TIMEOUTS.
  srv = await startTestServer(
    { timeouts: { headersMs: 1000, requestMs: 2500, keepAliveMs: 1000, checkEveryMs: 200 } },
    'limits-',
  );
  acct = await createAccount(srv.dataDir, 10);
  api = srv.api(acct.apiKey);
  port = Number(new URL(srv.url).port);
});
afterAll(async () => {
  await srv?.close();
});

type RawConnection = { socket: net.Socket; received: () => string; closed: Promise<void> };

function connect(): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (data += chunk));
    socket.on('error', () => {}); // a reset is one of the outcomes under test
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** The last HTTP response on the connection: status and parsed JSON body. */
function lastResponse(raw: string): { status: number; body: Record<string, unknown> } {
  const at = raw.lastIndexOf('HTTP/1.1 ');
  expect(at, `no HTTP response in ${JSON.stringify(raw)}`).toBeGreaterThanOrEqual(0);
  const response = raw.slice(at);
  const status = Number(response.slice(9, 12));
  const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<
    string,
    unknown
  >;
  return { status, body };
}

async function trickle(conn: RawConnection): Promise<number> {
  let sent = 0;
  while (!conn.socket.destroyed && conn.socket.writable) {
    conn.socket.write('{');
    sent++;
    await new Promise((r) => setTimeout(r, 50));
  }
  return sent;
}

describe('stalled and trickling connections', () => {
  it.each([
    ['without a key', null],
    ['with a valid key', 'valid'],
  ] as const)(
    'closes a connection that sends half its headers and stalls (%s), with a 408 error body',
    async (_name, auth) => {
      const conn = await connect();
      const key = auth === 'valid' ? `Authorization: Bearer ${acct.apiKey}\r\n` : '';
      conn.socket.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n${key}X-Half: `);
      // Meanwhile the server answers everyone else.
      expectSuccess(await api.get('/v1/models'), 200);
      await conn.closed;
      const { status, body } = lastResponse(conn.received());
      expect(status).toBe(408);
      expect(body).toEqual({ success: false, error: expect.stringMatching(/timeout/i) });
    },
  );

  it('ends a body trickled byte by byte with a 408 error and charges nothing', async () => {
    const before = await api.balance();
    const conn = await connect();
    conn.socket.write(
      `POST /v1/generations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acct.apiKey}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
    );
    const sent = await trickle(conn);
    await conn.closed;
    expect(sent).toBeLessThan(100_000);
    const { status, body } = lastResponse(conn.received());
    expect(status).toBe(408);
    expect(body.success).toBe(false);
    expect(await api.balance()).toBe(before);
  });

  it('ends a trickled body without a key too: 401 at once, then the connection is closed', async () => {
    const conn = await connect();
    conn.socket.write(
      'POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: 5000000\r\n\r\n',
    );
    await trickle(conn);
    await conn.closed;
    const raw = conn.received();
    expect(raw.startsWith('HTTP/1.1 401 ')).toBe(true);
    expect(lastResponse(raw).body.success).toBe(false);
  });

  it('closes an idle keep-alive connection after the keep-alive limit', async () => {
    const conn = await connect();
    conn.socket.write(
      `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acct.apiKey}\r\n\r\n`,
    );
    await conn.closed;
    const raw = conn.received();
    expect(raw.startsWith('HTTP/1.1 200 ')).toBe(true);
    expect(raw).toMatch(/keep-alive: timeout=1/i);
  });
});
