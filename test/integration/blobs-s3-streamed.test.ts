/**
 * Files in S3 are streamed through `serve`, never held whole (issue 14, item 5): a real `serve
 * --blobs` whose S3 endpoint is a proxy in front of s3rver. On the download of a large upload the
 * proxy forwards the object's first megabyte and holds the rest; the client must already be
 * receiving the body, which it cannot if the server reads the object whole before answering.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, makeTempDir, removeDir } from './helpers/api';
import { createAccount, spawnServe, stopServe, type ServeProcess } from './helpers/cli';
import { startTestS3, type TestS3 } from './helpers/s3';
import { startPacingProxy, type PacingProxy } from './helpers/s3-pacing-proxy';

const BUCKET = 'dropshoot-streamed';
const FORWARD_FIRST = 1024 * 1024;
const FIRST_BYTES_WITHIN_MS = 10_000;

let s3: TestS3;
let proxy: PacingProxy;
let dataDir: string;
let serve: ServeProcess | undefined;
let apiKey: string;

beforeAll(async () => {
  s3 = await startTestS3([BUCKET]);
  proxy = await startPacingProxy(s3.endpoint);
  dataDir = makeTempDir('blobs-streamed-');
  apiKey = (await createAccount(dataDir, 0)).apiKey;
  const blobsUrl = `s3://${BUCKET}/?endpoint=${encodeURIComponent(proxy.endpoint)}&region=us-east-1&forcePathStyle=true`;
  serve = await spawnServe(dataDir, ['--blobs', blobsUrl]);
});
afterAll(async () => {
  if (serve) await stopServe(serve);
  await proxy?.close();
  await s3?.close();
  if (dataDir) removeDir(dataDir);
});

/** A PNG of random pixels: incompressible, so `width * height * 3` bytes and then some. */
async function noisePng(width: number, height: number): Promise<Buffer> {
  return sharp(crypto.randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

const sha256 = (b: Buffer): string => crypto.createHash('sha256').update(b).digest('hex');

/** A GET whose body is collected as it arrives; `firstBytes` resolves on the first chunk. */
function download(url: string): {
  status: Promise<number>;
  firstBytes: Promise<void>;
  received: () => number;
  body: Promise<Buffer>;
} {
  const chunks: Buffer[] = [];
  let received = 0;
  let gotStatus!: (s: number) => void;
  let gotFirst!: () => void;
  const status = new Promise<number>((r) => (gotStatus = r));
  const firstBytes = new Promise<void>((r) => (gotFirst = r));
  const body = new Promise<Buffer>((resolve, reject) => {
    http
      .get(url, (res) => {
        gotStatus(res.statusCode ?? 0);
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          received += chunk.length;
          gotFirst();
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      })
      .on('error', reject);
  });
  return { status, firstBytes, received: () => received, body };
}

/** `promise`, or a failure with `message()` (worded when the time is up) after `ms`. */
function within<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('serve --blobs on S3', () => {
  it('streams a large file from the bucket: the client receives bytes while the bucket still holds most of the object', async () => {
    const bytes = await noisePng(1400, 1400);
    expect(bytes.length).toBeGreaterThan(5 * 1024 * 1024);
    const url = await new Api(serve!.url, apiKey).uploadUrl(bytes);
    const sha = sha256(bytes);
    expect(await s3.keys(BUCKET)).toContain(`${sha.slice(0, 2)}/${sha}`);

    const held = proxy.holdNextGet(sha, FORWARD_FIRST);
    const got = download(url);
    try {
      await within(
        Promise.all([held.holding, got.firstBytes]),
        FIRST_BYTES_WITHIN_MS,
        () =>
          `no byte of the body reached the client within ${FIRST_BYTES_WITHIN_MS / 1000} s while the ` +
          `bucket had sent ${held.forwarded()} of ${bytes.length} bytes (holding the rest): ` +
          `/files reads the whole object before answering instead of streaming it`,
      );
      expect(await got.status).toBe(200);
      // Still held: what the client has came from the first megabyte alone.
      expect(held.forwarded()).toBe(FORWARD_FIRST);
      expect(got.received()).toBeGreaterThan(0);
      expect(got.received()).toBeLessThanOrEqual(FORWARD_FIRST);
    } finally {
      held.resume();
    }
    const body = await got.body;
    expect(body.length).toBe(bytes.length);
    expect(sha256(body)).toBe(sha);
  });
});
