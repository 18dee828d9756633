/**
 * Images a request fetched, held in the blob store until its transaction decides. `record` (inside that
 * transaction) checks the account's storage quota and adds the rows that keep the files;
 * `release` (in a `finally`) drops whatever was not recorded, so a refused request stores nothing.
 */
import { recordBlob, type BlobStore } from './blob-store';
import type { Store } from '../store/types';
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
  async record(
    tx: Store,
    accountId: string,
    quotaBytes: number | undefined,
    now: Date,
  ): Promise<void> {
    const fresh = new Map<string, Staged>();
    for (const f of this.files)
      if (!(await tx.blobs.accountHolds(accountId, f.sha256))) fresh.set(f.sha256, f);
    if (fresh.size === 0) return;
    const added = [...fresh.values()].reduce((sum, f) => sum + f.size, 0);
    await assertQuota(tx, accountId, added, quotaBytes);
    for (const f of fresh.values())
      await recordBlob(
        tx,
        { sha256: f.sha256, mime: f.mime, size: f.size, origin: 'fetched', accountId },
        now,
      );
  }

  /** Never throws (see BlobStore.release). */
  async release(): Promise<void> {
    await Promise.all(this.files.splice(0).map((f) => this.blobs.release(f.sha256)));
  }
}

/** Throws StorageLimitReached when `added` bytes would take the account past `quotaBytes`. */
export async function assertQuota(
  tx: Store,
  accountId: string,
  added: number,
  quotaBytes: number | undefined,
): Promise<void> {
  if (quotaBytes === undefined || added === 0) return;
  const held = await tx.blobs.accountBytes(accountId);
  if (held + added > quotaBytes) throw new StorageLimitReached(held, added, quotaBytes);
}
