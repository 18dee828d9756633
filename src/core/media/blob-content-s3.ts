/**
 * Blob bytes in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2…), keyed `prefix/ab/abcdef…`.
 * Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) only, and
 * no message this module produces carries them. Providers read files, so `localCopy` streams an
 * object into a scratch folder on this machine once and reuses it.
 *
 * The scratch space is bounded (`scratchLimitBytes`, 2 GiB by default): past it, the copies
 * used least recently are removed, never one that is held (a provider reading it). Each process
 * keeps its copies in a folder of its own under the scratch folder (`p-<host>-<pid>-<random>`),
 * so processes sharing one --data never remove each other's files; a folder whose process has
 * not touched its `.alive` mark for 10 minutes (killed, or gone) is removed by the next process
 * that starts or checks in.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
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
  type LocalCopy,
} from './blob-content';
import type { S3Location } from './blobs-url';

export type S3Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** Default bound of one process's scratch copies (`serve --blob-scratch-mb`). */
export const DEFAULT_SCRATCH_LIMIT_BYTES = 2 * 1024 * 1024 * 1024;
/** A process's scratch folder whose `.alive` mark is older than this is an orphan. */
export const SCRATCH_STALE_MS = 10 * 60_000;
const HEARTBEAT_MS = 60_000;
const ALIVE_MARK = '.alive';
const PROCESS_FOLDER = /^p-/;
/** Copies written by versions before per-process folders (`ab/<sha>` right under scratch). */
const LEGACY_FOLDER = /^[0-9a-f]{2}$/;
const LEGACY_STALE_MS = 24 * 3_600_000;

export type ScratchOptions = {
  /** The scratch folder shared by the processes of one --data (each uses a folder inside). */
  dir: string;
  /** Most bytes of unheld copies this process keeps (default DEFAULT_SCRATCH_LIMIT_BYTES). */
  limitBytes?: number;
  /** How often this process marks its folder alive (default 60 s; tests shorten it). */
  heartbeatMs?: number;
  /** Where scratch upkeep failures are reported (default: stderr). */
  log?: (message: string) => void;
};

/** One scratch copy: `refs` holders; downloaded once `size` is known. */
type ScratchEntry = { refs: number; size: number; present: boolean; ready?: Promise<void> };

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
  /** This process's copies, least recently used first; one download per content at a time. */
  private readonly scratch = new Map<string, ScratchEntry>();
  private scratchBytes = 0;
  private readonly scratchRoot: string;
  /** This process's own folder inside the scratch folder. */
  private readonly scratchDir: string;
  private readonly scratchLimit: number;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly log: (message: string) => void;

  constructor(
    private readonly location: S3Location,
    credentials: S3Credentials,
    scratch: ScratchOptions,
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
    this.scratchRoot = scratch.dir;
    this.scratchLimit = scratch.limitBytes ?? DEFAULT_SCRATCH_LIMIT_BYTES;
    this.scratchDir = path.join(
      scratch.dir,
      `p-${os.hostname().replace(/[^A-Za-z0-9.-]/g, '_')}-${process.pid}-${randomBytes(4).toString('hex')}`,
    );
    fs.mkdirSync(this.scratchDir, { recursive: true });
    fs.writeFileSync(path.join(this.scratchDir, ALIVE_MARK), '');
    this.removeOrphanScratch();
    this.log = scratch.log ?? ((message) => process.stderr.write(`${message}\n`));
    this.heartbeat = setInterval(() => this.beat(), scratch.heartbeatMs ?? HEARTBEAT_MS).unref();
  }

  /** Marks this process's folder alive and removes dead ones; never throws (it runs in a timer). */
  private beat(): void {
    try {
      const now = new Date();
      try {
        fs.utimesSync(path.join(this.scratchDir, ALIVE_MARK), now, now);
      } catch {
        this.recreateScratchDir();
      }
      this.removeOrphanScratch();
    } catch (err) {
      this.log(
        `scratch folder ${this.scratchDir}: ${err instanceof Error ? err.message : String(err)} (tried again in the next heartbeat)`,
      );
    }
  }

  /**
   * The folder was removed from under us (another process took it for dead, or a clean-up): made
   * again with its mark, and the unheld copies it held forgotten. A held copy's file is fetched
   * again by the next `localCopy` that finds it missing.
   */
  private recreateScratchDir(): void {
    fs.mkdirSync(this.scratchDir, { recursive: true });
    fs.writeFileSync(path.join(this.scratchDir, ALIVE_MARK), '');
    for (const [sha256, entry] of this.scratch)
      if (entry.refs === 0 && entry.present) {
        this.scratchBytes -= entry.size;
        this.scratch.delete(sha256);
      }
  }

  /** Bytes of scratch copies this process keeps now (held ones included). */
  get scratchSize(): number {
    return this.scratchBytes;
  }

  /**
   * Removes the folders of processes that stopped touching their mark (killed, or gone without
   * closing) and copies left by versions before per-process folders once a day old. Never a live
   * process's folder: its mark is touched every minute.
   */
  private removeOrphanScratch(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.scratchRoot);
    } catch {
      return;
    }
    const now = Date.now();
    for (const name of names) {
      const folder = path.join(this.scratchRoot, name);
      if (folder === this.scratchDir) continue;
      try {
        if (PROCESS_FOLDER.test(name)) {
          const mark = path.join(folder, ALIVE_MARK);
          const touched = fs.existsSync(mark)
            ? fs.statSync(mark).mtimeMs
            : fs.statSync(folder).mtimeMs;
          if (now - touched > SCRATCH_STALE_MS) fs.rmSync(folder, { recursive: true, force: true });
        } else if (LEGACY_FOLDER.test(name)) {
          for (const file of fs.readdirSync(folder)) {
            const at = path.join(folder, file);
            if (now - fs.statSync(at).mtimeMs > LEGACY_STALE_MS) fs.rmSync(at, { force: true });
          }
        }
      } catch {
        // raced with another process removing it, or unreadable: left for the next pass
      }
    }
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
    const entry = this.scratch.get(sha256);
    // A held copy stays until released (then trimmed like any other).
    if (entry && entry.refs === 0 && entry.present) this.forget(sha256, entry);
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

  async localCopy(sha256: string): Promise<LocalCopy> {
    let entry = this.scratch.get(sha256);
    if (entry)
      this.scratch.delete(sha256); // re-inserted last: most recently used
    else entry = { refs: 0, size: 0, present: false };
    this.scratch.set(sha256, entry);
    // Held from now: neither this download's trim nor another's removes it.
    entry.refs++;
    const held = entry;
    if (held.present && !fs.existsSync(this.localPath(sha256))) {
      // Removed with its folder from under us: fetched again.
      held.present = false;
      this.scratchBytes -= held.size;
      held.size = 0;
      held.ready = undefined;
    }
    try {
      held.ready ??= this.download(sha256, held);
      await held.ready;
    } catch (err) {
      held.refs--;
      if (!held.present && held.refs === 0 && this.scratch.get(sha256) === held)
        this.scratch.delete(sha256);
      throw err;
    }
    let released = false;
    return {
      path: this.localPath(sha256),
      release: () => {
        if (released) return;
        released = true;
        held.refs--;
        this.trimScratch();
      },
    };
  }

  /** Streams the object to a temp name and renames it into place (never seen half-written). */
  private async download(sha256: string, entry: ScratchEntry): Promise<void> {
    const file = this.localPath(sha256);
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      await pipeline(await this.get(sha256), fs.createWriteStream(tmp));
      fs.renameSync(tmp, file);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      entry.ready = undefined; // the next caller tries again
      throw err;
    }
    entry.size = fs.statSync(file).size;
    entry.present = true;
    this.scratchBytes += entry.size;
    this.trimScratch();
  }

  /** Removes unheld copies, least recently used first, until the scratch is within its limit. */
  private trimScratch(): void {
    for (const [sha256, entry] of this.scratch) {
      if (this.scratchBytes <= this.scratchLimit) return;
      if (entry.refs === 0 && entry.present) this.forget(sha256, entry);
    }
  }

  private forget(sha256: string, entry: ScratchEntry): void {
    fs.rmSync(this.localPath(sha256), { force: true });
    this.scratchBytes -= entry.size;
    this.scratch.delete(sha256);
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

  /** Ends the client and removes this process's scratch folder (runs have stopped by now). */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.client.destroy();
    fs.rmSync(this.scratchDir, { recursive: true, force: true });
    this.scratch.clear();
    this.scratchBytes = 0;
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
