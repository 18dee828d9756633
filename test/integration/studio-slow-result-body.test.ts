/**
 * A result whose body arrives slowly but steadily (a video of several MB on a slow link). Before
 * (review rev23 N4) the request timeout covered the whole body: every try was cut at 60 s, 6
 * tries, then held as paid; the next run the same. Now the timeout bounds silence (no bytes for
 * that long), not the transfer. Scaled down: the client's timeout is 1 s and the reference
 * service's resultTrickle sends each body in 30 parts, one every 100 ms (3 s).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchDownload, HttpClient } from '../../src/client';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** The HTTP client with a 1 s timeout: a body taking longer arrives within it chunk by chunk. */
class OneSecondClient extends HttpClient {
  constructor(options: ConstructorParameters<typeof HttpClient>[0]) {
    super({ ...options, timeoutMs: 1000 });
  }
}

describe('a result body slower than the request timeout, arriving steadily', () => {
  it('is collected: the timeout is on silence, not on the whole body', async () => {
    const email = 'slow-body@example.com';
    const w = await referenceWorld(cleanups, {
      email,
      diamonds: 100,
      photos: 1,
      service: {
        seed: 4,
        timeScale: 0.01,
        jobSeconds: [20, 20],
        resultTrickle: { chunks: 30, everyMs: 100 },
      },
    });
    const summary = await runOnWorld(w, { Client: OneSecondClient, giveUpAfterMs: 60_000 });
    expect(chargedTo(w.service, email)).toBe(1);
    expect(summary.diamondsSpent).toBe(1);
    // Before: 0 exported, held "paid ... the next run downloads them" after 6 tries cut at 1 s.
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
  }, 90_000);
});

describe('a result body that stops arriving', () => {
  it('is cut after the silence, told as such (not a hang)', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 1000 });
      res.write(Buffer.alloc(100)); // then nothing more
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/r.png`;
    await expect(fetchDownload(url, {}, 300)).rejects.toThrow(/no bytes for 300 ms/);
  });
});
