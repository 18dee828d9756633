/**
 * Where the HTTP client sends the API key when it downloads a result: to the service's own origin
 * (results behind the key, as on every API call), never to another host (a CDN), and not through
 * a redirect to one. A relative result URL is read against the base URL. Real servers on loopback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

type Seen = { path: string; authorization: string | null };

/** A host that serves a PNG at any path, except `/go-elsewhere` (a redirect to `redirectTo`). */
async function host(png: Buffer, redirectTo?: () => string) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization ?? null });
    if (req.url === '/go-elsewhere' && redirectTo)
      return res.writeHead(302, { location: `${redirectTo()}/moved` }).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(png);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

it('sends the key to its own origin only, reads relative URLs against the base URL', async () => {
  const png = await sharp({
    create: { width: 4, height: 4, channels: 3, background: { r: 1, g: 2, b: 3 } },
  })
    .png()
    .toBuffer();
  const cdn = await host(png);
  const service = await host(png, () => cdn.url);
  // A base URL with a path, as a gateway or a versioned mount gives.
  const client = new HttpClient({ baseUrl: `${service.url}/api/`, apiKey: 'sk_test_key' });

  expect((await client.download(`${service.url}/v1/files/a.png`)).mime).toBe('image/png');
  expect((await client.download('/results/b.png')).mime).toBe('image/png');
  expect((await client.download('results/c.png')).mime).toBe('image/png');
  await client.download(`${cdn.url}/blob/d`);
  await client.download(`${service.url}/go-elsewhere`);

  expect(service.seen).toEqual([
    { path: '/v1/files/a.png', authorization: 'Bearer sk_test_key' },
    { path: '/results/b.png', authorization: 'Bearer sk_test_key' },
    { path: '/api/results/c.png', authorization: 'Bearer sk_test_key' },
    { path: '/go-elsewhere', authorization: 'Bearer sk_test_key' },
  ]);
  // Another host (another port is another origin) never sees it, directly or redirected.
  expect(cdn.seen).toEqual([
    { path: '/blob/d', authorization: null },
    { path: '/moved', authorization: null },
  ]);
});
