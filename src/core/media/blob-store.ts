/**
 * Content-addressed files on disk (`blobs/ab/abcdef…`), with a row per public blob id. The id in
 * the public URL is random, so knowing an image's hash never reveals its URL.
 *
 * A file is kept only while a row names it. Request paths `stage` bytes before their transaction
 * decides (charge, quota, idempotency) and `release` them after it, whatever it decided: a file
 * no row names is removed then, and `sweepOrphans` collects what a crash left between the two.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ReadableDB, WritableDB } from '../db/types';
import { newId } from '../ids';

export type BlobOrigin = 'upload' | 'result' | 'fetched';
export type BlobRecord = { id: string; sha256: string; mime: string; size: number };

const CONTENT_NAME = /^[0-9a-f]{64}$/;

export class BlobStore {
  /** Staged hashes held by requests of this process (content is shared, so counted). */
  private readonly staged = new Map<string, number>();

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
    const id = this.record(sha256, mime, data.length, origin, accountId, now);
    return { id, sha256, mime, size: data.length };
  }

  /** Inserts the row that keeps a written file; for callers inside their own transaction. */
  record(sha256: string, mime: string, size: number, origin: BlobOrigin, accountId: string | null, now: Date): string {
    const id = newId('b');
    this.db
      .prepare('INSERT INTO blobs (id, sha256, mime, size, account_id, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, sha256, mime, size, accountId, origin, now.toISOString());
    return id;
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

  /** Writes the bytes and holds them until `release`; the file stays only if a row names it by then. */
  stage(data: Buffer): string {
    const sha256 = this.writeFile(data);
    this.staged.set(sha256, (this.staged.get(sha256) ?? 0) + 1);
    return sha256;
  }

  release(sha256: string): void {
    const holders = (this.staged.get(sha256) ?? 1) - 1;
    if (holders > 0) {
      this.staged.set(sha256, holders);
      return;
    }
    this.staged.delete(sha256);
    if (!this.isRecorded(sha256)) fs.rmSync(this.pathOf(sha256), { force: true });
  }

  isRecorded(sha256: string): boolean {
    return this.db.prepare('SELECT 1 FROM blobs WHERE sha256 = ? LIMIT 1').get(sha256) !== undefined;
  }

  /**
   * Removes files no row names and temp files a crash left, if older than `graceMs` (a request
   * of another process may be between its write and its row). Returns what was removed.
   */
  sweepOrphans(graceMs: number, now = Date.now()): { files: number; bytes: number } {
    const recorded = new Set((this.db.prepare('SELECT DISTINCT sha256 FROM blobs').all() as { sha256: string }[]).map((r) => r.sha256));
    const removed = { files: 0, bytes: 0 };
    for (const dir of fs.readdirSync(this.root, { withFileTypes: true })) {
      if (!dir.isDirectory() || !/^[0-9a-f]{2}$/.test(dir.name)) continue;
      const folder = path.join(this.root, dir.name);
      for (const name of fs.readdirSync(folder)) {
        const kept = CONTENT_NAME.test(name) && (recorded.has(name) || this.staged.has(name));
        if (kept) continue;
        const file = path.join(folder, name);
        let stat: fs.Stats;
        try {
          stat = fs.statSync(file);
        } catch {
          continue; // removed meanwhile
        }
        if (!stat.isFile() || now - stat.mtimeMs < graceMs) continue;
        fs.rmSync(file, { force: true });
        removed.files++;
        removed.bytes += stat.size;
      }
    }
    return removed;
  }

  /** Bytes of distinct uploaded and fetched content an account holds (its storage quota). */
  accountBytes(accountId: string): number {
    const row = this.db
      .prepare('SELECT COALESCE(SUM(size), 0) AS bytes FROM (SELECT DISTINCT sha256, size FROM blobs WHERE account_id = ?)')
      .get(accountId) as { bytes: number };
    return row.bytes;
  }

  /** Whether the account already holds this content (adding it again costs no storage). */
  accountHolds(accountId: string, sha256: string): boolean {
    return this.db.prepare('SELECT 1 FROM blobs WHERE account_id = ? AND sha256 = ? LIMIT 1').get(accountId, sha256) !== undefined;
  }

  get(id: string): BlobRecord | undefined {
    return getBlob(this.db, id);
  }
}

export function getBlob(db: ReadableDB, id: string): BlobRecord | undefined {
  return db.prepare('SELECT id, sha256, mime, size FROM blobs WHERE id = ?').get(id) as BlobRecord | undefined;
}
