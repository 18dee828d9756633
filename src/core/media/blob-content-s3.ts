/**
 * Blob bytes in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2…), keyed `prefix/ab/abcdef…`.
 * Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) only, and
 * no message this module produces carries them. Providers read files, so `localCopy` streams an
 * object into a scratch folder on this machine once and reuses it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  BlobMissing,
  CONTENT_NAME,
  type BlobContentStore,
  type BlobListing,
  type BlobObject,
  type ByteRange,
} from './blob-content';
import type { S3Location } from './blobs-url';

export type S3Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** The usual AWS variables; a clear error (naming the variables, never their values) without them. */
export function s3CredentialsFromEnv(env: NodeJS.ProcessEnv): S3Credentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      'S3 blob storage needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment',
    );
  }
  return {
    accessKeyId,
    secretAccessKey,
    ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
  };
}

export class S3BlobContent implements BlobContentStore {
  readonly shared = true;
  readonly description: string;
  private readonly client: S3Client;
  private readonly secrets: string[];
  /** Downloads into the scratch folder under way, so concurrent units share one. */
  private readonly copying = new Map<string, Promise<string>>();

  constructor(
    private readonly location: S3Location,
    credentials: S3Credentials,
    private readonly scratchDir: string,
  ) {
    this.description = `s3://${location.bucket}/${location.prefix}${location.endpoint ? ` at ${location.endpoint}` : ''}`;
    this.secrets = [credentials.secretAccessKey, credentials.sessionToken ?? ''].filter(
      (s) => s.length >= 4,
    );
    this.client = new S3Client({
      region: location.region,
      ...(location.endpoint ? { endpoint: location.endpoint } : {}),
      forcePathStyle: location.forcePathStyle,
      credentials,
      // Most S3-compatible servers do not take the SDK's default streaming checksum trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
      maxAttempts: 3,
    });
    fs.mkdirSync(scratchDir, { recursive: true });
  }

  private key(sha256: string): string {
    return `${this.location.prefix}${sha256.slice(0, 2)}/${sha256}`;
  }

  /** An SDK error as a message fit to show: what failed and why, never a credential. */
  private failure(what: string, err: unknown): Error {
    let reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    for (const secret of this.secrets) reason = reason.split(secret).join('***');
    return new Error(`${what} on ${this.description} failed: ${reason}`);
  }

  async put(sha256: string, data: Buffer): Promise<void> {
    // Always written, never skipped when present: the write refreshes LastModified, so a sweep in
    // another process (which spares objects younger than its grace period) leaves it alone.
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.location.bucket,
          Key: this.key(sha256),
          Body: data,
          ContentLength: data.length,
        }),
      );
    } catch (err) {
      throw this.failure('storing a blob', err);
    }
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.location.bucket,
          Key: this.key(sha256),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      if (!(out.Body instanceof Readable)) throw new Error('the object has no body stream');
      return out.Body;
    } catch (err) {
      if (isNotFound(err)) throw new BlobMissing(sha256);
      throw this.failure('reading a blob', err);
    }
  }

  async head(sha256: string): Promise<BlobObject | undefined> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.key(sha256) }),
      );
      return { sha256, size: out.ContentLength ?? 0, modifiedMs: out.LastModified?.getTime() ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw this.failure('looking up a blob', err);
    }
  }

  async delete(sha256: string): Promise<void> {
    await this.deleteKey(this.key(sha256));
    fs.rmSync(this.localPath(sha256), { force: true });
  }

  async deleteListed(name: string): Promise<void> {
    await this.deleteKey(`${this.location.prefix}${name}`);
  }

  private async deleteKey(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: key }));
    } catch (err) {
      throw this.failure('deleting a blob', err);
    }
  }

  async *list(): AsyncIterable<BlobListing> {
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.location.bucket,
            Prefix: this.location.prefix,
            ContinuationToken: token,
          }),
        );
      } catch (err) {
        throw this.failure('listing blobs', err);
      }
      for (const object of page.Contents ?? []) {
        if (!object.Key) continue;
        const name = object.Key.slice(this.location.prefix.length);
        const base = name.slice(name.lastIndexOf('/') + 1);
        const sha256 =
          CONTENT_NAME.test(base) && name === `${base.slice(0, 2)}/${base}` ? base : null;
        yield {
          name,
          sha256,
          size: object.Size ?? 0,
          modifiedMs: object.LastModified?.getTime() ?? 0,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  localPath(sha256: string): string {
    return path.join(this.scratchDir, sha256.slice(0, 2), sha256);
  }

  localCopy(sha256: string): Promise<string> {
    const file = this.localPath(sha256);
    if (fs.existsSync(file)) return Promise.resolve(file);
    const running = this.copying.get(sha256);
    if (running) return running;
    const copy = (async () => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
      try {
        await pipeline(await this.get(sha256), fs.createWriteStream(tmp));
        fs.renameSync(tmp, file);
      } catch (err) {
        fs.rmSync(tmp, { force: true });
        throw err;
      }
      return file;
    })().finally(() => this.copying.delete(sha256));
    this.copying.set(sha256, copy);
    return copy;
  }

  async ping(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }), {
        abortSignal: AbortSignal.timeout(5_000),
      });
    } catch (err) {
      throw this.failure('reaching the bucket', err);
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
