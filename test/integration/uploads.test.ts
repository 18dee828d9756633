/**
 * POST /v1/uploads (spec 4.5, 7, 8): raw bytes, format judged by signature, 8 MiB limit, public
 * URL serving the same bytes, Idempotency-Key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, expectError, expectSuccess, type Api } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, type Account } from './helpers/cli';
import { garmentJpeg, garmentPng, garmentWebp, isPng, paddedPng } from './helpers/images';

const EIGHT_MIB = 8 * 1024 * 1024;

let srv: TestServer;
let acct: Account;
let api: Api;

beforeAll(async () => {
  srv = await startTestServer({}, 'uploads-');
  acct = await createAccount(srv.dataDir, 7);
  api = srv.api(acct.apiKey);
});
afterAll(async () => {
  await srv?.close();
});

async function expectServed(url: string, bytes: Buffer, mime: string): Promise<void> {
  // No Authorization header: the upload URL must be public.
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type') ?? '').toContain(mime);
  const got = Buffer.from(await res.arrayBuffer());
  expect(got.length).toBe(bytes.length);
  expect(got.equals(bytes)).toBe(true);
}

describe('accepted uploads', () => {
  it.each([
    ['PNG', 'image/png', garmentPng],
    ['JPEG', 'image/jpeg', () => garmentJpeg()],
    ['WebP', 'image/webp', garmentWebp],
  ] as const)(
    'stores a %s and serves it back byte-for-byte without auth',
    async (_name, mime, make) => {
      const bytes = await make();
      const res = await api.upload(bytes, mime);
      expectSuccess(res, 200);
      expect(typeof res.body.id).toBe('string');
      expect(res.body.url).toMatch(/^https?:\/\//);
      await expectServed(res.body.url as string, bytes, mime);
    },
  );

  it('judges the format by signature: a PNG sent as image/jpeg is accepted and served as image/png', async () => {
    const bytes = await garmentPng(120, 150);
    const res = await api.upload(bytes, 'image/jpeg');
    expectSuccess(res, 200);
    await expectServed(res.body.url as string, bytes, 'image/png');
  });

  it('gives every upload its own id and url', async () => {
    const bytes = await garmentPng();
    const a = await api.upload(bytes, 'image/png');
    const b = await api.upload(bytes, 'image/png');
    expectSuccess(a, 200);
    expectSuccess(b, 200);
    expect(a.body.id).not.toBe(b.body.id);
  });

  it('accepts exactly 8,388,608 bytes and serves all of them', async () => {
    const bytes = await paddedPng(EIGHT_MIB);
    expect(bytes.length).toBe(EIGHT_MIB);
    expect(isPng(bytes)).toBe(true);
    const res = await api.upload(bytes, 'image/png');
    expectSuccess(res, 200);
    const got = await download(res.body.url as string);
    expect(got.status).toBe(200);
    expect(got.bytes.length).toBe(EIGHT_MIB);
    expect(got.bytes.equals(bytes)).toBe(true);
  });

  it('does not charge diamonds for uploads', async () => {
    expect(await api.balance()).toBe(7);
  });
});

describe('refused uploads', () => {
  it('answers 413 for 8,388,609 bytes', async () => {
    const bytes = await paddedPng(EIGHT_MIB + 1);
    expectError(await api.upload(bytes, 'image/png'), 413);
  });

  it('answers 413 for a much larger body too, and keeps serving afterwards', async () => {
    const bytes = await paddedPng(20 * 1024 * 1024);
    let status = 0;
    try {
      const res = await api.upload(bytes, 'image/png');
      status = res.status;
      expectError(res, 413);
    } catch (err) {
      // A server may close the connection after answering 413 to an oversized stream.
      if (status !== 0) throw err;
    }
    expectSuccess(await api.get('/v1/account'), 200);
  });

  it('answers 415 for text sent with Content-Type image/png', async () => {
    expectError(
      await api.upload(Buffer.from('hello, I am not an image at all\n'.repeat(20)), 'image/png'),
      415,
    );
  });

  it('answers 415 for a GIF, a PDF and an SVG even when labelled as an image', async () => {
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    const pdf = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
    );
    expectError(await api.upload(gif, 'image/png'), 415);
    expectError(await api.upload(pdf, 'image/jpeg'), 415);
    expectError(await api.upload(svg, 'image/webp'), 415);
  });

  it('refuses an empty body with a 4xx JSON error', async () => {
    const res = await api.upload(Buffer.alloc(0), 'image/png');
    expectError(res, [400, 415]);
  });
});

describe('Idempotency-Key on uploads', () => {
  it('returns the same response for the same key and body, and 409 for the same key with a different body', async () => {
    const bytes = await garmentPng(90, 110);
    const key = `idem-upload-${Date.now()}`;
    const first = await api.upload(bytes, 'image/png', { 'Idempotency-Key': key });
    expectSuccess(first, 200);
    const again = await api.upload(bytes, 'image/png', { 'Idempotency-Key': key });
    expectSuccess(again, 200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.url).toBe(first.body.url);
    const other = await api.upload(await garmentPng(91, 111), 'image/png', {
      'Idempotency-Key': key,
    });
    expectError(other, 409);
  });
});
