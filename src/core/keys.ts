/**
 * Accounts and API keys. Keys are 256-bit random secrets shown once; only their SHA-256 is stored
 * (a fast hash is enough for high-entropy secrets and keeps authentication off the hot path).
 */
import { hash, randomBytes } from 'node:crypto';
import type { ReadableDB, WritableDB } from './db/types';
import { AdminError, Unauthorized } from './errors';
import { newId } from './ids';
import { grant } from './ledger';
import { LIMITS } from '../shared/api';

export type AuthenticatedKey = { keyId: string; accountId: string; dailyCap: number };

const KEY_PREFIX = 'ds_live_';
const hashKey = (secret: string): string => hash('sha256', secret, 'hex');

function mintKey(db: WritableDB, accountId: string, dailyCap: number, now: Date) {
  const apiKey = KEY_PREFIX + randomBytes(32).toString('base64url');
  const keyId = newId('key', 9);
  db.prepare(
    'INSERT INTO api_keys (id, account_id, hash, prefix, daily_cap, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(keyId, accountId, hashKey(apiKey), apiKey.slice(0, 12), dailyCap, now.toISOString());
  return { apiKey, keyId };
}

function checkCap(dailyCap: number | undefined): number {
  const cap = dailyCap ?? LIMITS.defaultDailyCap;
  if (!Number.isSafeInteger(cap) || cap < 1) throw new AdminError('--daily-cap must be a whole number >= 1');
  return cap;
}

export function createAccount(
  db: WritableDB,
  input: { email: string; diamonds: number; dailyCap?: number },
  now: Date,
): { email: string; apiKey: string; keyId: string; accountId: string } {
  const cap = checkCap(input.dailyCap);
  return db.transaction(() => {
    const exists = db.prepare('SELECT 1 FROM accounts WHERE email = ?').get(input.email);
    if (exists) throw new AdminError(`an account with e-mail ${input.email} already exists`);
    const accountId = newId('acct', 9);
    db.prepare('INSERT INTO accounts (id, email, created_at) VALUES (?, ?, ?)').run(
      accountId,
      input.email,
      now.toISOString(),
    );
    grant(db, accountId, input.diamonds, now, 'opening balance');
    return { email: input.email, accountId, ...mintKey(db, accountId, cap, now) };
  }).immediate();
}

export function accountIdByEmail(db: ReadableDB, email: string): string {
  const row = db.prepare('SELECT id FROM accounts WHERE email = ?').get(email) as { id: string } | undefined;
  if (!row) throw new AdminError(`no account with e-mail ${email}`);
  return row.id;
}

/** The account's oldest key still in force, or null (the embedded client's own key). */
export function firstActiveKeyId(db: ReadableDB, email: string): string | null {
  const row = db
    .prepare(
      `SELECT k.id FROM api_keys k JOIN accounts a ON a.id = k.account_id
       WHERE a.email = ? AND k.revoked_at IS NULL ORDER BY k.created_at LIMIT 1`,
    )
    .get(email) as { id: string } | undefined;
  return row?.id ?? null;
}

export function createKey(
  db: WritableDB,
  input: { email: string; dailyCap?: number },
  now: Date,
): { apiKey: string; keyId: string } {
  const cap = checkCap(input.dailyCap);
  return db.transaction(() => {
    const accountId = accountIdByEmail(db, input.email);
    const { active } = db
      .prepare('SELECT COUNT(*) AS active FROM api_keys WHERE account_id = ? AND revoked_at IS NULL')
      .get(accountId) as { active: number };
    if (active >= LIMITS.activeKeysPerAccount) {
      throw new AdminError(
        `${input.email} already has ${LIMITS.activeKeysPerAccount} active API keys (the maximum); revoke one first`,
      );
    }
    return mintKey(db, accountId, cap, now);
  }).immediate();
}

export function revokeKey(db: WritableDB, keyId: string, now: Date): { revoked: true } {
  const result = db
    .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
    .run(now.toISOString(), keyId);
  if (result.changes === 0) {
    const exists = db.prepare('SELECT 1 FROM api_keys WHERE id = ?').get(keyId);
    if (!exists) throw new AdminError(`no API key with id ${keyId}`);
  }
  return { revoked: true };
}

const BEARER = /^Bearer ([A-Za-z0-9_-]{16,200})$/;

/** Resolves an Authorization header to its key, or throws Unauthorized (401). */
export function authenticate(db: ReadableDB, header: string | undefined): AuthenticatedKey {
  const match = header ? BEARER.exec(header.trim()) : null;
  if (!match?.[1]) throw new Unauthorized();
  const row = db
    .prepare(
      `SELECT id AS keyId, account_id AS accountId, daily_cap AS dailyCap
       FROM api_keys WHERE hash = ? AND revoked_at IS NULL`,
    )
    .get(hashKey(match[1])) as AuthenticatedKey | undefined;
  if (!row) throw new Unauthorized();
  return row;
}

