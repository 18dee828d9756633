/**
 * Idempotency-Key support (beyond the spec): the same key with the same body within 24 hours
 * returns the first success response; with a different body it is refused (409). The service
 * looks the key up right after authentication (before balance or image checks) and makes
 * duplicates in flight wait for the first answer; the record is written inside the charge
 * transaction and checked again there, so two racing requests with one key can never both charge.
 */
import { createHash } from 'node:crypto';
import type { Store } from './store/types';
import { BadRequest, Conflict } from './errors';

export type Idempotency = { key: string; bodyHash: string; endpoint: string };
export type StoredResponse = { status: number; body: object };

const WINDOW_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Another request (another process) stored its answer for this key first: roll back, then replay it. */
export class AnsweredElsewhere extends Error {
  constructor() {
    super('another request answered this Idempotency-Key first');
    this.name = 'AnsweredElsewhere';
  }
}

export function idempotencyFor(
  endpoint: string,
  key: string | undefined,
  body: Buffer | string,
): Idempotency | undefined {
  if (key === undefined) return undefined;
  if (!KEY_PATTERN.test(key))
    throw new BadRequest('Idempotency-Key must be 1 to 255 visible ASCII characters');
  return { key, endpoint, bodyHash: createHash('sha256').update(body).digest('hex') };
}

/** The stored response for this key, or undefined; 409 when the key was used for another body. */
export async function replay(
  store: Store,
  accountId: string,
  idem: Idempotency,
  now: Date,
): Promise<StoredResponse | undefined> {
  const row = await store.idempotency.get(accountId, idem.endpoint, idem.key);
  if (!row || now.getTime() - Date.parse(row.createdAt) > WINDOW_MS) return undefined;
  if (row.bodyHash !== idem.bodyHash) {
    throw new Conflict('This Idempotency-Key was already used with a different request body');
  }
  return { status: row.status, body: row.body };
}

/** Stores the answer (inside the transaction that did the work); throws AnsweredElsewhere if a fresh answer exists. */
export async function remember(
  tx: Store,
  accountId: string,
  idem: Idempotency,
  response: StoredResponse,
  now: Date,
): Promise<void> {
  const stored = await tx.idempotency.put(
    {
      accountId,
      endpoint: idem.endpoint,
      key: idem.key,
      bodyHash: idem.bodyHash,
      status: response.status,
      body: response.body,
      createdAt: now.toISOString(),
    },
    new Date(now.getTime() - WINDOW_MS).toISOString(),
  );
  if (!stored) throw new AnsweredElsewhere();
}

/** Frees a key whose request ended in a refunded failure, so a retry with it is a new request. */
export function forget(tx: Store, accountId: string, idem: Idempotency): Promise<void> {
  return tx.idempotency.delete(accountId, idem.endpoint, idem.key);
}
