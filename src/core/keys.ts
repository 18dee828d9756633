/**
 * Accounts and API keys. Keys are 256-bit random secrets shown once; only their SHA-256 is stored
 * (a fast hash is enough for high-entropy secrets and keeps authentication off the hot path).
 */
import { hash, randomBytes } from 'node:crypto';
import type { ActiveKey, Store } from './store/types';
import { AdminError, Unauthorized } from './errors';
import { newId } from './ids';
import { grant } from './ledger';
import { LIMITS } from '../shared/api';

export type AuthenticatedKey = ActiveKey;

const KEY_PREFIX = 'ds_live_';
const hashKey = (secret: string): string => hash('sha256', secret, 'hex');

async function mintKey(tx: Store, accountId: string, dailyCap: number, now: Date) {
  const apiKey = KEY_PREFIX + randomBytes(32).toString('base64url');
  const keyId = newId('key', 9);
  await tx.keys.create({
    id: keyId,
    accountId,
    hash: hashKey(apiKey),
    prefix: apiKey.slice(0, 12),
    dailyCap,
    createdAt: now.toISOString(),
  });
  return { apiKey, keyId };
}

function checkCap(dailyCap: number | undefined): number {
  const cap = dailyCap ?? LIMITS.defaultDailyCap;
  if (!Number.isSafeInteger(cap) || cap < 1)
    throw new AdminError('--daily-cap must be a whole number >= 1');
  return cap;
}

export function createAccount(
  store: Store,
  input: { email: string; diamonds: number; dailyCap?: number },
  now: Date,
): Promise<{ email: string; apiKey: string; keyId: string; accountId: string }> {
  const cap = checkCap(input.dailyCap);
  return store.transaction(async (tx) => {
    if (await tx.accounts.idByEmail(input.email))
      throw new AdminError(`an account with e-mail ${input.email} already exists`);
    const accountId = newId('acct', 9);
    await tx.accounts.create({ id: accountId, email: input.email, createdAt: now.toISOString() });
    await grant(tx, accountId, input.diamonds, now, 'opening balance');
    return { email: input.email, accountId, ...(await mintKey(tx, accountId, cap, now)) };
  });
}

export async function accountIdByEmail(store: Store, email: string): Promise<string> {
  const id = await store.accounts.idByEmail(email);
  if (!id) throw new AdminError(`no account with e-mail ${email}`);
  return id;
}

/** The account's oldest key still in force, or null (the embedded client's own key). */
export async function firstActiveKeyId(store: Store, email: string): Promise<string | null> {
  return (await store.keys.firstActiveIdByEmail(email)) ?? null;
}

export function createKey(
  store: Store,
  input: { email: string; dailyCap?: number },
  now: Date,
): Promise<{ apiKey: string; keyId: string }> {
  const cap = checkCap(input.dailyCap);
  return store.transaction(async (tx) => {
    const accountId = await accountIdByEmail(tx, input.email);
    if ((await tx.keys.countActive(accountId)) >= LIMITS.activeKeysPerAccount) {
      throw new AdminError(
        `${input.email} already has ${LIMITS.activeKeysPerAccount} active API keys (the maximum); revoke one first`,
      );
    }
    return mintKey(tx, accountId, cap, now);
  });
}

export async function revokeKey(
  store: Store,
  keyId: string,
  now: Date,
): Promise<{ revoked: true }> {
  if ((await store.keys.revoke(keyId, now.toISOString())) === 'missing')
    throw new AdminError(`no API key with id ${keyId}`);
  return { revoked: true };
}

const BEARER = /^Bearer ([A-Za-z0-9_-]{16,200})$/;

/** Resolves an Authorization header to its key, or throws Unauthorized (401). */
export async function authenticate(
  store: Pick<Store, 'keys'>,
  header: string | undefined,
): Promise<AuthenticatedKey> {
  const match = header ? BEARER.exec(header.trim()) : null;
  if (!match?.[1]) throw new Unauthorized();
  const key = await store.keys.findActiveByHash(hashKey(match[1]));
  if (!key) throw new Unauthorized();
  return key;
}

/** An active key by id (in-process callers that hold the id, not the secret), or throws Unauthorized. */
export async function activeKeyById(store: Store, keyId: string): Promise<AuthenticatedKey> {
  const key = await store.keys.findActiveById(keyId);
  if (!key) throw new Unauthorized();
  return key;
}
