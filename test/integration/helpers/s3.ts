/**
 * An S3-compatible server for tests: s3rver, in this process, on loopback, over its own temp
 * folder, with s3rver's fixed credentials (S3RVER / S3RVER) put in the AWS variables the blob
 * store reads. `DROPSHOOT_TEST_BLOBS=s3` makes `startTestServer` put every server's blobs here.
 */
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import S3rver from 's3rver';
import { afterAll } from 'vitest';
import { makeTempDir, removeDir } from './api';

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export type TestS3 = {
  endpoint: string;
  /** s3rver's folder (removed by `close`). */
  directory: string;
  /** A `--blobs` URL for `bucket` (created on start). */
  blobsUrl(bucket: string, prefix?: string): string;
  /** A client of the same server, to look into buckets from the outside. */
  client: S3Client;
  keys(bucket: string): Promise<string[]>;
  put(bucket: string, key: string, body: Buffer): Promise<void>;
  close(): Promise<void>;
};

export async function startTestS3(buckets: string[]): Promise<TestS3> {
  const directory = makeTempDir('s3rver-');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  makePutsAtomic(server, `${directory}-parts`);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    directory,
    client,
    blobsUrl: (bucket, prefix = '') =>
      `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
    async keys(bucket) {
      const out = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
    },
    async put(bucket, key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async close() {
      client.destroy();
      await server.close();
      removeDir(directory);
      removeDir(`${directory}-parts`);
    },
  };
}

/**
 * S3 replaces an object atomically: a GET sees the old bytes or the new, never a mix. s3rver
 * truncates the file in place and answers the PUT before the write has finished, so a download
 * racing a re-upload of the same content-addressed object read a short file (a 500 seen once in
 * generations.test.ts on PostgreSQL + S3). Here each PUT is written whole beside the bucket
 * folders, then renamed into place.
 */
function makePutsAtomic(server: S3rver, partsDir: string): void {
  const store = server.store;
  fs.mkdirSync(partsDir, { recursive: true });
  store.putObject = async (object) => {
    const target = store.getResourcePath(object.bucket, object.key, 'object');
    const part = path.join(partsDir, crypto.randomUUID());
    const md5 = crypto.createHash('md5');
    let size = 0;
    const source = Buffer.isBuffer(object.content)
      ? Readable.from([object.content])
      : object.content;
    await pipeline(
      source,
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          md5.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      }),
      fs.createWriteStream(part),
    );
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(part, target);
    const digest = md5.digest('hex');
    await store.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
}

let shared: Promise<TestS3> | undefined;
// Registered when a test file imports this module: the file's shared server (if any) goes with it.
afterAll(async () => {
  const running = shared;
  shared = undefined;
  if (running) await (await running).close();
});
let bucketCount = 0;

/** With DROPSHOOT_TEST_BLOBS=s3: a fresh bucket on one s3rver per test worker; otherwise undefined. */
export async function testBlobsUrl(): Promise<string | undefined> {
  if (process.env.DROPSHOOT_TEST_BLOBS !== 's3') return undefined;
  const bucket = `dropshoot-${process.pid}-${++bucketCount}`;
  shared ??= startTestS3([]);
  const s3 = await shared;
  const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
  await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
  return s3.blobsUrl(bucket);
}
