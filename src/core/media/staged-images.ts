/**
 * Images a request fetched, held in the blob store until its transaction decides. `record` (inside that
 * transaction) checks the account's storage quota and adds the rows that keep the files;
 * `release` (in a `finally`) drops whatever was not recorded, so a refused request stores nothing.
 */
import type { BlobStore } from './blob-store';
import type { ImageMime } from './sniff';
import { StorageLimitReached } from '../errors';

type Staged = { sha256: string; mime: ImageMime; size: number };

export class StagedImages {
  private readonly files: Staged[] = [];

  constructor(private readonly blobs: BlobStore) {}

  async add(data: Buffer, mime: ImageMime): Promise<string> {
    const sha256 = await this.blobs.stage(data);
    this.files.push({ sha256, mime, size: data.length });
    return sha256;
  }

  /** Quota check and one `fetched` row per distinct file, owned by the account. */
  record(accountId: string, quotaBytes: number | undefined, now: Date): void {
    const fresh = new Map<string, Staged>();
    for (const f of this.files) if (!this.blobs.accountHolds(accountId, f.sha256)) fresh.set(f.sha256, f);
    if (fresh.size === 0) return;
    const added = [...fresh.values()].reduce((sum, f) => sum + f.size, 0);
    assertQuota(this.blobs, accountId, added, quotaBytes);
    for (const f of fresh.values()) this.blobs.record(f.sha256, f.mime, f.size, 'fetched', accountId, now);
  }

  /** Never throws (see BlobStore.release). */
  async release(): Promise<void> {
    await Promise.all(this.files.splice(0).map((f) => this.blobs.release(f.sha256)));
  }
}

/** Throws StorageLimitReached when `added` bytes would take the account past `quotaBytes`. */
export function assertQuota(blobs: BlobStore, accountId: string, added: number, quotaBytes: number | undefined): void {
  if (quotaBytes === undefined || added === 0) return;
  const held = blobs.accountBytes(accountId);
  if (held + added > quotaBytes) throw new StorageLimitReached(held, added, quotaBytes);
}
