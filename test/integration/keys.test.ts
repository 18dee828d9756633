/**
 * API keys, daily request counts and the core's schema version on a real SQLite file (the store
 * the core opens): hashes only, revocation, the five-key limit, counts that survive a restart.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORE_SCHEMA_VERSION, openDatabase, DatabaseTooNew } from '../../src/core/db/open';
import { openSqliteStore } from '../../src/core/store/sqlite';
import type { Store } from '../../src/core/store/types';
import { authenticate, createAccount, createKey, revokeKey } from '../../src/core/keys';
import { countRequest, requestsUsed } from '../../src/core/request-counter';
import { AdminError, DailyCapReached, Unauthorized } from '../../src/core/errors';

const now = new Date('2026-11-22T23:59:59Z');
let dir: string;
let file: string;
let store: Store;
const opened: Store[] = [];
const open = () => {
  const s = openSqliteStore(file);
  opened.push(s);
  return s;
};
/** The raw file, read as another process would. */
const raw = <T>(sql: string, ...args: unknown[]): T | undefined => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).get(...args) as T | undefined;
  } finally {
    db.close();
  }
};

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-keys-'));
  file = path.join(dir, 'core.db');
  store = open();
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => {});
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('API keys', () => {
  it('stores only a hash of the key', async () => {
    const { apiKey } = await createAccount(store, { email: 'a@example.com', diamonds: 0 }, now);
    const before = fs.readFileSync(file);
    const wal = fs.existsSync(`${file}-wal`) ? fs.readFileSync(`${file}-wal`) : Buffer.alloc(0);
    await store.close();
    const all = Buffer.concat([before, wal, fs.readFileSync(file)]);
    expect(all.includes(Buffer.from(apiKey))).toBe(false);
    store = open();
    expect((await authenticate(store, `Bearer ${apiKey}`)).keyId).toMatch(/^key_/);
  });

  it('rejects missing, malformed, unknown and revoked keys', async () => {
    const { apiKey, keyId } = await createAccount(
      store,
      { email: 'a@example.com', diamonds: 0 },
      now,
    );
    for (const header of [
      undefined,
      '',
      'Bearer',
      `Basic ${apiKey}`,
      'Bearer ds_live_unknownunknownunknown',
      `Bearer ${apiKey}x`,
    ]) {
      await expect(authenticate(store, header)).rejects.toThrow(Unauthorized);
    }
    await revokeKey(store, keyId, now);
    await expect(authenticate(store, `Bearer ${apiKey}`)).rejects.toThrow(Unauthorized);
    await expect(revokeKey(store, keyId, now)).resolves.toEqual({ revoked: true });
    await expect(revokeKey(store, 'key_missing', now)).rejects.toThrow(AdminError);
  });

  it('allows at most five active keys; revoking frees a slot', async () => {
    const { keyId } = await createAccount(store, { email: 'a@example.com', diamonds: 0 }, now);
    for (let i = 0; i < 4; i++) await createKey(store, { email: 'a@example.com' }, now);
    await expect(createKey(store, { email: 'a@example.com' }, now)).rejects.toThrow(AdminError);
    await revokeKey(store, keyId, now);
    expect((await createKey(store, { email: 'A@EXAMPLE.com' }, now)).apiKey).toMatch(/^ds_live_/);
  });

  it('counts requests per key per UTC day and refuses past the cap', async () => {
    await createAccount(store, { email: 'a@example.com', diamonds: 0 }, now);
    const { apiKey } = await createKey(store, { email: 'a@example.com', dailyCap: 3 }, now);
    const key = await authenticate(store, `Bearer ${apiKey}`);
    const counted = [];
    for (let i = 0; i < 3; i++) counted.push(await countRequest(store, key, now));
    expect(counted).toEqual([1, 2, 3]);
    await expect(countRequest(store, key, now)).rejects.toThrow(DailyCapReached);
    await expect(countRequest(store, key, now)).rejects.toThrow(
      /3 requests reached for this API key/,
    );
    // The next UTC day starts a fresh count.
    expect(await countRequest(store, key, new Date('2026-11-23T00:00:00Z'))).toBe(1);
  });

  it('writes counts to SQLite in batches that a restart reads back, adding to other writers', async () => {
    await createAccount(store, { email: 'a@example.com', diamonds: 0 }, now);
    const { apiKey } = await createKey(store, { email: 'a@example.com', dailyCap: 5 }, now);
    const key = await authenticate(store, `Bearer ${apiKey}`);
    await countRequest(store, key, now);
    await countRequest(store, key, now);
    const stored = () =>
      raw<{ count: number }>('SELECT count FROM key_usage WHERE key_id = ?', key.keyId)?.count;
    expect(stored()).toBeUndefined(); // not yet written
    await new Promise((resolve) => setTimeout(resolve, 200)); // a batch is written within 50 ms
    expect(stored()).toBe(2);
    // A second store (a restarted process) starts from the stored count; both writes add up.
    const second = open();
    expect(await countRequest(second, key, now)).toBe(3);
    await countRequest(store, key, now);
    await store.close();
    await second.close();
    expect(stored()).toBe(4);
    expect(await requestsUsed(open(), key.keyId, now)).toBe(4);
  });
});

describe('migrations', () => {
  it('refuses a database written by a newer version', async () => {
    await store.close();
    const db = new Database(file);
    db.pragma('user_version = 9999');
    db.close();
    expect(() => openDatabase(file)).toThrow(DatabaseTooNew);
    expect(() => openSqliteStore(file)).toThrow(DatabaseTooNew);
  });

  it('records the applied schema version and reopens without re-running', async () => {
    expect(raw('PRAGMA user_version')).toEqual({ user_version: CORE_SCHEMA_VERSION });
    await createAccount(store, { email: 'a@example.com', diamonds: 3 }, now);
    await store.close();
    store = open();
    expect(raw('SELECT COUNT(*) AS n FROM accounts')).toEqual({ n: 1 });
    expect(await store.accounts.idByEmail('a@example.com')).toMatch(/^acct_/);
  });
});
