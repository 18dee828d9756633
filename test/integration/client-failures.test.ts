/**
 * What the HTTP client tells the scheduler about a failure, from the transport and headers (not
 * from messages): `retryAfterMs` from `Retry-After` (seconds or HTTP date), and `notSent` only
 * when the request certainly never left (a closed port), never for a reset or a dropped answer
 * once the request was written, which a service may have acted on.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, HttpClient } from '../../src/client';
import { startReferenceService } from '../reference-service';
import { startFaultProxy, type Faults } from '../reference-service/fault-proxy';
import { closedPort } from './helpers/closed-port';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function failureOf(call: Promise<unknown>): Promise<ApiError> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

/** A port nothing listens on (taken, then freed). */
async function behindProxy(faults: Faults) {
  const service = await startReferenceService({ seed: 5, timeScale: 0.01 });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: 'failures@example.com', diamonds: 100 });
  const proxy = await startFaultProxy({
    target: service.url,
    seed: 1,
    faults,
    retryAfterSeconds: 3,
    allow: (_f, method, p) => method === 'POST' && p === '/v1/generations',
  });
  cleanups.push(() => proxy.close());
  const client = new HttpClient({ baseUrl: proxy.url, apiKey, timeoutMs: 5000 });
  const photo = await sharp({
    create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 60, b: 40 } },
  })
    .jpeg()
    .toBuffer();
  const upload = await client.upload(photo);
  const create = () =>
    client.createGeneration(
      { toolId: 'remove_background', images: { user_photo: upload.url } },
      { idempotencyKey: 'k-1' },
    );
  return { service, proxy, create };
}

describe('HttpClient failures', () => {
  it('a closed port: the create certainly never went out (notSent), and the message says so', async () => {
    const port = await closedPort();
    const client = new HttpClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      timeoutMs: 5000,
    });
    const err = await failureOf(
      client.createGeneration(
        { toolId: 'remove_background', images: { user_photo: 'https://example.invalid/a.jpg' } },
        { idempotencyKey: 'k' },
      ),
    );
    expect(err).toMatchObject({ status: 0, notSent: true, retryable: true, retryAfterMs: null });
    expect(err.message).toMatch(/could not be reached: .*ECONNREFUSED/);
    // In words an operator can act on, the code after them (Settings' Check, the board's banner).
    expect(err.message).toMatch(
      /could not be reached: nothing answers at that address \(connect ECONNREFUSED/,
    );
  });

  it('an unresolvable host: not sent', async () => {
    const client = new HttpClient({
      baseUrl: 'http://dropshoot-no-such-host.invalid',
      apiKey: 'k',
      timeoutMs: 5000,
    });
    const err = await failureOf(client.getAccount());
    expect(err).toMatchObject({ status: 0, notSent: true });
    expect(err.message).toMatch(/could not be reached: the host name is not known \(/);
  });

  it('a port fetch will not connect to: said so, not "bad port" alone', async () => {
    const client = new HttpClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 5000 });
    const err = await failureOf(client.getAccount());
    expect(err.message).toMatch(/fetch does not connect to that port \(bad port\): use another/);
  });

  it('an answer dropped after the service took the request: not notSent (the job exists and was charged)', async () => {
    const { service, proxy, create } = await behindProxy({ dropAfter: 1 });
    const err = await failureOf(create());
    expect(err).toMatchObject({ status: 0, notSent: false });
    expect(err.message).toMatch(
      /no answer to POST \/v1\/generations; the request may have arrived/,
    );
    expect(proxy.log.filter((e) => e.path === '/v1/generations')).toMatchObject([
      { fault: 'dropAfter', forwarded: true },
    ]);
    expect(service.jobs('failures@example.com')).toHaveLength(1);
  });

  it('a reset after the request was written looks the same to the client, so it is not notSent either', async () => {
    // The proxy read the whole request and did not forward it; from the client's side the bytes
    // left and the answer never came, exactly as above: only the safe reading is possible.
    const { service, proxy, create } = await behindProxy({ resetBefore: 1 });
    const err = await failureOf(create());
    expect(err).toMatchObject({ status: 0, notSent: false });
    expect(proxy.log.filter((e) => e.path === '/v1/generations')).toMatchObject([
      { fault: 'resetBefore', forwarded: false },
    ]);
    expect(service.jobs('failures@example.com')).toHaveLength(0);
  });

  it('a timeout once connected is a lost answer', async () => {
    const server = http.createServer(() => undefined); // reads the request, never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    cleanups.push(() => void server.closeAllConnections());
    const client = new HttpClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'k',
      timeoutMs: 300,
    });
    const err = await failureOf(
      client.createGeneration(
        { toolId: 'remove_background', images: { user_photo: 'https://example.invalid/a.jpg' } },
        { idempotencyKey: 'k' },
      ),
    );
    expect(err).toMatchObject({ status: 0, notSent: false });
    expect(err.message).toMatch(/no answer in time/);
  });

  it('Retry-After in seconds (the fault proxy’s 429)', async () => {
    const { create } = await behindProxy({ rateLimit429: 1 });
    expect(await failureOf(create())).toMatchObject({
      status: 429,
      retryAfterMs: 3000,
      notSent: false,
    });
  });

  it('Retry-After as an HTTP date, measured against the answer’s own Date header', async () => {
    // A 429 in the spec's shape whose clock is an hour ahead of ours: the wait is still 90 s.
    const served = new Date(Date.now() + 3_600_000);
    served.setMilliseconds(0);
    const server = http.createServer((_req, res) => {
      res
        .writeHead(429, {
          'content-type': 'application/json',
          date: served.toUTCString(),
          'retry-after': new Date(served.getTime() + 90_000).toUTCString(),
        })
        .end(JSON.stringify({ success: false, error: 'Too many requests' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = new HttpClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'k',
      timeoutMs: 5000,
    });
    expect(await failureOf(client.getAccount())).toMatchObject({
      status: 429,
      retryAfterMs: 90_000,
      message: 'Too many requests',
    });
  });
});
