/**
 * Idempotency-Key support (beyond the spec): the same key with the same body within 24 hours
 * returns the first success response; with a different body it is refused (409). The service
 * looks the key up right after authentication (before balance or image checks) and makes
 * duplicates in flight wait for the first answer; the record is written inside the charge
 * transaction and checked again there, so two racing requests with one key can never both charge.
 */
import { createHash } from 'node:crypto';
import type { WritableDB } from './db/types';
import { BadRequest, Conflict } from './errors';

export type Idempotency = { key: string; bodyHash: string; endpoint: string };
export type StoredResponse = { status: number; body: object };

const WINDOW_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function idempotencyFor(endpoint: string, key: string | undefined, body: Buffer | string): Idempotency | undefined {
  if (key === undefined) return undefined;
  if (!KEY_PATTERN.test(key)) throw new BadRequest('Idempotency-Key must be 1 to 255 visible ASCII characters');
  return { key, endpoint, bodyHash: createHash('sha256').update(body).digest('hex') };
}

/** The stored response for this key, or undefined; 409 when the key was used for another body. */
export function replay(db: WritableDB, accountId: string, idem: Idempotency, now: Date): StoredResponse | undefined {
  const row = db
    .prepare(
      'SELECT body_hash AS bodyHash, status, response, created_at AS createdAt FROM idempotency WHERE account_id = ? AND endpoint = ? AND idem_key = ?',
    )
    .get(accountId, idem.endpoint, idem.key) as
    | { bodyHash: string; status: number; response: string; createdAt: string }
    | undefined;
  if (!row || now.getTime() - Date.parse(row.createdAt) > WINDOW_MS) return undefined;
  if (row.bodyHash !== idem.bodyHash) {
    throw new Conflict('This Idempotency-Key was already used with a different request body');
  }
  return { status: row.status, body: JSON.parse(row.response) as object };
}

export function remember(db: WritableDB, accountId: string, idem: Idempotency, response: StoredResponse, now: Date): void {
  db.prepare(
    `INSERT OR REPLACE INTO idempotency (account_id, endpoint, idem_key, body_hash, status, response, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(accountId, idem.endpoint, idem.key, idem.bodyHash, response.status, JSON.stringify(response.body), now.toISOString());
}

/** Frees a key whose request ended in a refunded failure, so a retry with it is a new request. */
export function forget(db: WritableDB, accountId: string, idem: Idempotency): void {
  db.prepare('DELETE FROM idempotency WHERE account_id = ? AND endpoint = ? AND idem_key = ?').run(accountId, idem.endpoint, idem.key);
}
