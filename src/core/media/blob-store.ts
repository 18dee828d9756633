/**
 * Content-addressed files on disk (`blobs/ab/abcdef…`), with a row per public blob id. The id in
 * the public URL is random, so knowing an image's hash never reveals its URL.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ReadableDB, WritableDB } from '../db/types';
import { newId } from '../ids';

export type BlobOrigin = 'upload' | 'result' | 'fetched';
export type BlobRecord = { id: string; sha256: string; mime: string; size: number };

export class BlobStore {
  constructor(
    private readonly db: WritableDB,
    readonly root: string,
  ) {
    fs.mkdirSync(root, { recursive: true });
  }

  pathOf(sha256: string): string {
    return path.join(this.root, sha256.slice(0, 2), sha256);
  }

  /** Writes the bytes (once per content) and records a new public id for them. */
  put(data: Buffer, mime: string, origin: BlobOrigin, accountId: string | null, now: Date): BlobRecord {
    const sha256 = this.writeFile(data);
    const id = newId('b');
    this.db
      .prepare(
        'INSERT INTO blobs (id, sha256, mime, size, account_id, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(id, sha256, mime, data.length, accountId, origin, now.toISOString());
    return { id, sha256, mime, size: data.length };
  }

  /** Stores the file only (no row); for callers that insert the row in their own transaction. */
  writeFile(data: Buffer): string {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const file = this.pathOf(sha256);
    if (!fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      // Write aside and rename so a crash never leaves a truncated file under its final name.
      const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
      fs.writeFileSync(tmp, data);
      fs.renameSync(tmp, file);
    }
    return sha256;
  }

  get(id: string): BlobRecord | undefined {
    return getBlob(this.db, id);
  }
}

export function getBlob(db: ReadableDB, id: string): BlobRecord | undefined {
  return db.prepare('SELECT id, sha256, mime, size FROM blobs WHERE id = ?').get(id) as BlobRecord | undefined;
}
