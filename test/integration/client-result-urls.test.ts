/**
 * Where the HTTP client sends the API key when it downloads a result: to the service's own origin
 * (results behind the key, as on every API call), never to another host (a CDN), and not through
 * a redirect to one. A relative result URL is read against the base URL. A signed URL, or a file
 * whose host refuses a second credential (an object store behind the service's origin), goes
 * without the key. A poll's results given as `{url}` objects are read. Real servers on loopback.
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

const REVOKED = JSON.stringify({
  error: { code: 'UNAUTHORIZED', message: 'Invalid or revoked API key' },
});

/**
 * A host that serves a PNG at any path, except `/go-elsewhere` (a redirect to `redirectTo`),
 * `/store/*` (an object store: S3's 400 to a request that carries an Authorization header) and
 * `/private/*` (a 401 to a request without the key, and to a wrong one).
 */
async function host(png: Buffer, redirectTo?: () => string) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const authorization = req.headers.authorization ?? null;
    seen.push({ path: req.url ?? '', authorization });
    if (req.url === '/go-elsewhere' && redirectTo)
      return res.writeHead(302, { location: `${redirectTo()}/moved` }).end();
    if (req.url?.startsWith('/store/') && authorization !== null)
      return res
        .writeHead(400, { 'content-type': 'application/xml' })
        .end(
          '<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>',
        );
    if (req.url?.startsWith('/private/') && authorization !== 'Bearer sk_right_key')
      return res.writeHead(401, { 'content-type': 'application/json' }).end(REVOKED);
    if (req.url?.startsWith('/v1/generations/'))
      return res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'g1',
          status: 'completed',
          resultUrls: req.url.endsWith('/odd')
            ? [{ url: '/r/1.png' }, 7]
            : [{ url: '/r/1.png' }, '/r/2.png', { url: '/r/1.png' }],
        }),
      );
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

const tinyPng = () =>
  sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 1, g: 2, b: 3 } } })
    .png()
    .toBuffer();

it('a file on its own origin that refuses the key is fetched without it; a signed URL never gets it', async () => {
  const service = await host(await tinyPng());
  const client = new HttpClient({ baseUrl: service.url, apiKey: 'sk_test_key' });
  // Before (review rev14 F1): 'download ... answered 400', the paid result never collected.
  expect((await client.download(`${service.url}/store/a.png`)).mime).toBe('image/png');
  expect(
    (await client.download(`${service.url}/store/b.png?X-Amz-Signature=abc&X-Amz-Expires=60`)).mime,
  ).toBe('image/png');
  expect(service.seen).toEqual([
    { path: '/store/a.png', authorization: 'Bearer sk_test_key' },
    { path: '/store/a.png', authorization: null },
    { path: '/store/b.png?X-Amz-Signature=abc&X-Amz-Expires=60', authorization: null },
  ]);
  // A file the key does not open stays refused, and says so with the key's refusal.
  await expect(client.download(`${service.url}/private/c.png`)).rejects.toMatchObject({
    status: 401,
    message: expect.stringMatching(/answered 401: .*Invalid or revoked API key/),
  });
});

it("a poll's results given as {url} objects are read as their URLs; entries that are no URL make the answer unreadable", async () => {
  const service = await host(await tinyPng());
  const client = new HttpClient({ baseUrl: service.url, apiKey: 'sk_test_key' });
  // Before (review rev14 F2): fetched as '/[object%20Object]', a 404, the paid result lost.
  expect((await client.getGeneration('g1')).resultUrls).toEqual(['/r/1.png', '/r/2.png']);
  await expect(client.getGeneration('odd')).rejects.toMatchObject({
    message: expect.stringMatching(
      /cannot be read as a job \(resultUrls holds entries that are not URLs\)/,
    ),
  });
});
