import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORE_SCHEMA_VERSION, openDatabase, DatabaseTooNew } from '../../src/core/db/open';
import type { WritableDB } from '../../src/core/db/types';
import { authenticate, createAccount, createKey, revokeKey } from '../../src/core/keys';
import { RequestCounter } from '../../src/core/request-counter';
import { AdminError, DailyCapReached, Unauthorized } from '../../src/core/errors';

const now = new Date('2026-11-22T23:59:59Z');
let dir: string;
let db: WritableDB;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-keys-'));
  db = openDatabase(path.join(dir, 'core.db'));
});
afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('API keys', () => {
  it('stores only a hash of the key', () => {
    const { apiKey } = createAccount(db, { email: 'a@example.com', diamonds: 0 }, now);
    const file = fs.readFileSync(path.join(dir, 'core.db'));
    db.pragma('wal_checkpoint(TRUNCATE)');
    const all = Buffer.concat([file, fs.readFileSync(path.join(dir, 'core.db'))]);
    expect(all.includes(Buffer.from(apiKey))).toBe(false);
    expect(authenticate(db, `Bearer ${apiKey}`).keyId).toMatch(/^key_/);
  });

  it('rejects missing, malformed, unknown and revoked keys', () => {
    const { apiKey, keyId } = createAccount(db, { email: 'a@example.com', diamonds: 0 }, now);
    for (const header of [undefined, '', 'Bearer', `Basic ${apiKey}`, 'Bearer ds_live_unknownunknownunknown', `Bearer ${apiKey}x`]) {
      expect(() => authenticate(db, header)).toThrow(Unauthorized);
    }
    revokeKey(db, keyId, now);
    expect(() => authenticate(db, `Bearer ${apiKey}`)).toThrow(Unauthorized);
  });

  it('allows at most five active keys; revoking frees a slot', () => {
    const { keyId } = createAccount(db, { email: 'a@example.com', diamonds: 0 }, now);
    for (let i = 0; i < 4; i++) createKey(db, { email: 'a@example.com' }, now);
    expect(() => createKey(db, { email: 'a@example.com' }, now)).toThrow(AdminError);
    revokeKey(db, keyId, now);
    expect(createKey(db, { email: 'A@EXAMPLE.com' }, now).apiKey).toMatch(/^ds_live_/);
  });

  it('counts requests per key per UTC day and refuses past the cap', () => {
    createAccount(db, { email: 'a@example.com', diamonds: 0 }, now);
    const { apiKey } = createKey(db, { email: 'a@example.com', dailyCap: 3 }, now);
    const key = authenticate(db, `Bearer ${apiKey}`);
    const counter = new RequestCounter(db);
    expect([1, 2, 3].map(() => counter.count(key, now))).toEqual([1, 2, 3]);
    expect(() => counter.count(key, now)).toThrow(DailyCapReached);
    expect(() => counter.count(key, now)).toThrow(/3 requests reached for this API key/);
    // The next UTC day starts a fresh count.
    expect(counter.count(key, new Date('2026-11-23T00:00:00Z'))).toBe(1);
    counter.flush();
  });

  it('writes counts to SQLite in batches that a restart reads back, adding to other writers', () => {
    createAccount(db, { email: 'a@example.com', diamonds: 0 }, now);
    const { apiKey } = createKey(db, { email: 'a@example.com', dailyCap: 5 }, now);
    const key = authenticate(db, `Bearer ${apiKey}`);
    const first = new RequestCounter(db);
    first.count(key, now);
    first.count(key, now);
    const stored = () => (db.prepare('SELECT count FROM key_usage WHERE key_id = ?').get(key.keyId) as { count: number } | undefined)?.count;
    expect(stored()).toBeUndefined(); // not yet flushed
    first.flush();
    expect(stored()).toBe(2);
    // A second counter (a restarted process) starts from the stored count; both flushes add up.
    const second = new RequestCounter(db);
    expect(second.count(key, now)).toBe(3);
    first.count(key, now);
    first.flush();
    second.flush();
    expect(stored()).toBe(4);
    expect(new RequestCounter(db).used(key.keyId, now)).toBe(4);
  });
});

describe('migrations', () => {
  it('refuses a database written by a newer version', () => {
    db.pragma('user_version = 9999');
    db.close();
    expect(() => openDatabase(path.join(dir, 'core.db'))).toThrow(DatabaseTooNew);
    db = openDatabase(path.join(dir, 'other.db'));
  });

  it('records the applied schema version and reopens without re-running', () => {
    expect(db.pragma('user_version', { simple: true })).toBe(CORE_SCHEMA_VERSION);
    createAccount(db, { email: 'a@example.com', diamonds: 3 }, now);
    db.close();
    db = openDatabase(path.join(dir, 'core.db'));
    expect(db.prepare('SELECT COUNT(*) AS n FROM accounts').get()).toEqual({ n: 1 });
  });
});
