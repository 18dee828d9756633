/**
 * Where blob bytes live, addressed by their SHA-256: a folder on this machine (the embedded
 * default) or an S3-compatible bucket (team mode). Rows naming the content stay in the database
 * (`BlobStore`); this layer only stores, streams, lists and deletes bytes.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** What a listing or a head says about one stored object. */
export type BlobObject = { sha256: string; size: number; modifiedMs: number };
/** A listed name that is not content (a temp file a crash left, a stray key), with its age. */
export type BlobListing = { name: string; sha256: string | null; size: number; modifiedMs: number };
export type ByteRange = { start: number; end: number };

export type BlobContentStore = {
  /** Where the bytes go, safe to print (no credentials). */
  readonly description: string;
  /**
   * Whether other processes write to the same store. A shared store never deletes content a
   * request staged and then refused: another process may be recording the same hash; the sweep
   * (after its grace period) collects it instead.
   */
  readonly shared: boolean;
  /** Stores `data` under `sha256` (the caller hashed it); storing the same content again is harmless. */
  put(sha256: string, data: Buffer): Promise<void>;
  /** The bytes as a stream (never buffered whole); `range` is inclusive. Throws BlobMissing. */
  get(sha256: string, range?: ByteRange): Promise<Readable>;
  head(sha256: string): Promise<BlobObject | undefined>;
  delete(sha256: string): Promise<void>;
  /** Every stored name, for the orphan sweep. */
  list(): AsyncIterable<BlobListing>;
  /** Removes a listed name that is not content (see `BlobListing.sha256 === null`). */
  deleteListed(name: string): Promise<void>;
  /**
   * A file on this machine holding the content, for tools that read files (the providers).
   * The local store answers with its own file; a remote one copies into scratch space first and
   * keeps the copy while it is held: call `release` once the file has been read (a bounded
   * scratch space may then remove it).
   */
  localCopy(sha256: string): Promise<LocalCopy>;
  /** Where `localCopy` puts (or has put) the content; no I/O. */
  localPath(sha256: string): string;
  /** Throws (with a reason fit to show) when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
};

/** A file `localCopy` made or found; kept in place until `release` (idempotent). */
export type LocalCopy = { path: string; release(): void };

export class BlobMissing extends Error {
  constructor(sha256: string) {
    super(`blob content ${sha256.slice(0, 12)}… is not in the store`);
  }
}

export const CONTENT_NAME = /^[0-9a-f]{64}$/;

export const sha256Of = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** Content-addressed files under one folder: `root/ab/abcdef…` (the layout of every data folder so far). */
export class LocalBlobContent implements BlobContentStore {
  readonly shared = false;
  readonly description: string;

  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
    this.description = `files under ${root}`;
  }

  localPath(sha256: string): string {
    return path.join(this.root, sha256.slice(0, 2), sha256);
  }

  async localCopy(sha256: string): Promise<LocalCopy> {
    return { path: this.localPath(sha256), release: () => {} };
  }

  // Synchronous on purpose: same cost as before on the request path, and no interleaving between
  // the existence check and the rename within this process.
  async put(sha256: string, data: Buffer): Promise<void> {
    this.putSync(sha256, data);
  }

  putSync(sha256: string, data: Buffer): void {
    const file = this.localPath(sha256);
    if (fs.existsSync(file)) return;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Write aside and rename so a crash never leaves a truncated file under its final name.
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    const file = this.localPath(sha256);
    const handle = await fs.promises.open(file, 'r').catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new BlobMissing(sha256) : err;
    });
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async head(sha256: string): Promise<BlobObject | undefined> {
    try {
      const stat = await fs.promises.stat(this.localPath(sha256));
      return stat.isFile() ? { sha256, size: stat.size, modifiedMs: stat.mtimeMs } : undefined;
    } catch {
      return undefined;
    }
  }

  async delete(sha256: string): Promise<void> {
    fs.rmSync(this.localPath(sha256), { force: true });
  }

  async deleteListed(name: string): Promise<void> {
    fs.rmSync(path.join(this.root, name.slice(0, 2), name), { force: true });
  }

  async *list(): AsyncIterable<BlobListing> {
    for (const dir of fs.readdirSync(this.root, { withFileTypes: true })) {
      if (!dir.isDirectory() || !/^[0-9a-f]{2}$/.test(dir.name)) continue;
      const folder = path.join(this.root, dir.name);
      for (const name of fs.readdirSync(folder)) {
        let stat: fs.Stats;
        try {
          stat = fs.statSync(path.join(folder, name));
        } catch {
          continue; // removed meanwhile
        }
        if (!stat.isFile()) continue;
        yield {
          name,
          sha256: CONTENT_NAME.test(name) ? name : null,
          size: stat.size,
          modifiedMs: stat.mtimeMs,
        };
      }
    }
  }

  async ping(): Promise<void> {
    await fs.promises.access(this.root, fs.constants.R_OK | fs.constants.W_OK).catch(() => {
      throw new Error(`the blob folder ${this.root} is not readable and writable`);
    });
  }

  async close(): Promise<void> {}
}
