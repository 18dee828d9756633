/**
 * Content-addressed blobs: the bytes in a `BlobContentStore` (files under `blobs/ab/abcdef…`, or
 * an S3-compatible bucket), with a row per public blob id. The id in the public URL is random, so
 * knowing an image's hash never reveals its URL.
 *
 * Content is kept only while a row names it. Request paths `stage` bytes before their transaction
 * decides (charge, quota, idempotency) and `release` them after it, whatever it decided: content
 * no row names is removed then (by a store of this process alone; a shared store leaves it to the
 * sweep), and `sweepOrphans` collects what a crash left between the two.
 */
import type { Readable } from 'node:stream';
import type { BlobOrigin, BlobRecord, Store } from '../store/types';
import { newId } from '../ids';
import { sha256Of, type BlobContentStore, type ByteRange, type LocalCopy } from './blob-content';

export type { BlobOrigin, BlobRecord } from '../store/types';

export class BlobStore {
  /** Staged hashes held by requests of this process (content is shared, so counted). */
  private readonly staged = new Map<string, number>();

  constructor(
    private readonly store: Store,
    readonly content: BlobContentStore,
    private readonly log?: (message: string) => void,
  ) {}

  /** Where a provider finds the content as a file; call `localCopy` first (a no-op for local files). */
  pathOf(sha256: string): string {
    return this.content.localPath(sha256);
  }

  /** The content as a file here, kept until `release` (see BlobContentStore.localCopy). */
  localCopy(sha256: string): Promise<LocalCopy> {
    return this.content.localCopy(sha256);
  }

  /** The stored bytes as a stream (`range` inclusive); throws BlobMissing. */
  open(sha256: string, range?: ByteRange): Promise<Readable> {
    return this.content.get(sha256, range);
  }

  /** Writes the bytes (once per content) and records a new public id for them. */
  async put(
    data: Buffer,
    mime: string,
    origin: BlobOrigin,
    accountId: string | null,
    now: Date,
  ): Promise<BlobRecord> {
    const sha256 = await this.writeFile(data);
    const id = await recordBlob(
      this.store,
      { sha256, mime, size: data.length, origin, accountId },
      now,
    );
    return { id, sha256, mime, size: data.length };
  }

  /** Stores the content only (no row); for callers that insert the row in their own transaction. */
  async writeFile(data: Buffer): Promise<string> {
    const sha256 = sha256Of(data);
    await this.content.put(sha256, data);
    return sha256;
  }

  /** Writes the bytes and holds them until `release`; they stay only if a row names them by then. */
  async stage(data: Buffer): Promise<string> {
    const sha256 = sha256Of(data);
    // Held before the write, so a sweep of this process running meanwhile spares it.
    this.staged.set(sha256, (this.staged.get(sha256) ?? 0) + 1);
    try {
      await this.content.put(sha256, data);
    } catch (err) {
      this.unhold(sha256);
      throw err;
    }
    return sha256;
  }

  /** Never throws: content left behind is the sweep's to collect. */
  async release(sha256: string): Promise<void> {
    try {
      if (!this.unhold(sha256) || this.content.shared || (await this.isRecorded(sha256))) return;
      if (this.staged.has(sha256)) return; // staged again by another request meanwhile
      await this.content.delete(sha256);
    } catch (err) {
      this.log?.(
        `could not remove unrecorded blob content (the sweep will): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** Drops one hold; true when it was the last. */
  private unhold(sha256: string): boolean {
    const holders = (this.staged.get(sha256) ?? 1) - 1;
    if (holders > 0) {
      this.staged.set(sha256, holders);
      return false;
    }
    this.staged.delete(sha256);
    return true;
  }

  isRecorded(sha256: string): Promise<boolean> {
    return this.store.blobs.isRecorded(sha256);
  }

  /**
   * Removes content no row names and temp files a crash left, if older than `graceMs` (a request
   * of another process may be between its write and its row). Returns what was removed.
   */
  async sweepOrphans(graceMs: number, now = Date.now()): Promise<{ files: number; bytes: number }> {
    const recorded = await this.store.blobs.recordedShas();
    const removed = { files: 0, bytes: 0 };
    for await (const entry of this.content.list()) {
      if (now - entry.modifiedMs < graceMs) continue;
      if (entry.sha256 === null) await this.content.deleteListed(entry.name);
      // Asked again just before deleting: a row may have come since the listing started.
      else if (
        recorded.has(entry.sha256) ||
        this.staged.has(entry.sha256) ||
        (await this.isRecorded(entry.sha256))
      )
        continue;
      else await this.content.delete(entry.sha256);
      removed.files++;
      removed.bytes += entry.size;
    }
    return removed;
  }

  get(id: string): Promise<BlobRecord | undefined> {
    return this.store.blobs.get(id);
  }
}

/** Inserts the row that keeps written content under a new public id; for callers inside their own transaction. */
export async function recordBlob(
  tx: Store,
  blob: {
    sha256: string;
    mime: string;
    size: number;
    origin: BlobOrigin;
    accountId: string | null;
  },
  now: Date,
): Promise<string> {
  const id = newId(blob.origin === 'result' ? 'r' : 'b');
  await tx.blobs.insert({ id, ...blob, createdAt: now.toISOString() });
  return id;
}
