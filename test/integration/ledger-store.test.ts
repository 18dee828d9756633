/**
 * The diamond ledger's rules on a real SQLite store (charges, refunds once, append-only, never
 * negative, two stores on one file); ledger.test.ts checks the same money over HTTP.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/core/store/sqlite';
import type { Store } from '../../src/core/store/types';
import { createAccount } from '../../src/core/keys';
import { balanceOf, charge, entriesFor, grant, refund } from '../../src/core/ledger';
import { InsufficientDiamonds } from '../../src/core/errors';

const now = new Date('2026-11-22T10:00:00Z');
let dir: string;
let file: string;
let store: Store;
let accountId: string;
const inTx = <T>(s: Store, fn: (tx: Store) => Promise<T>) => s.transaction(fn);

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-ledger-'));
  file = path.join(dir, 'core.db');
  store = openSqliteStore(file);
  accountId = (await createAccount(store, { email: 'a@example.com', diamonds: 10 }, now)).accountId;
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('ledger', () => {
  it('records the opening balance as a grant', async () => {
    expect(await balanceOf(store, accountId)).toBe(10);
    expect((await entriesFor(store, accountId)).map((e) => [e.kind, e.amount])).toEqual([
      ['grant', 10],
    ]);
  });

  it('charges and refuses a charge the balance cannot cover, writing nothing', async () => {
    expect(await inTx(store, (tx) => charge(tx, accountId, 'job_1', 4, now))).toBe(6);
    await expect(inTx(store, (tx) => charge(tx, accountId, 'job_2', 7, now))).rejects.toThrow(
      InsufficientDiamonds,
    );
    expect(await balanceOf(store, accountId)).toBe(6);
    expect(await entriesFor(store, accountId)).toHaveLength(2);
  });

  it('refunds a charge exactly once', async () => {
    await inTx(store, (tx) => charge(tx, accountId, 'job_1', 4, now));
    expect(await inTx(store, (tx) => refund(tx, 'job_1', now, 'failed'))).toBe(4);
    expect(await inTx(store, (tx) => refund(tx, 'job_1', now, 'failed again'))).toBe(0);
    expect(await balanceOf(store, accountId)).toBe(10);
    expect((await entriesFor(store, accountId)).filter((e) => e.kind === 'refund')).toHaveLength(1);
  });

  it('refuses a second charge for the same job at the database level', async () => {
    await inTx(store, (tx) => charge(tx, accountId, 'job_1', 1, now));
    await expect(inTx(store, (tx) => charge(tx, accountId, 'job_1', 1, now))).rejects.toThrow(
      /UNIQUE/,
    );
    expect(await balanceOf(store, accountId)).toBe(9);
  });

  describe('the file itself', () => {
    let db: Database.Database;
    beforeEach(() => {
      db = new Database(file);
    });
    afterEach(() => db.close());

    it('is append-only: updates and deletes are refused', async () => {
      await inTx(store, (tx) => grant(tx, accountId, 5, now));
      expect(() => db.prepare('UPDATE ledger SET amount = 1000').run()).toThrow(/append-only/);
      expect(() => db.prepare('DELETE FROM ledger').run()).toThrow(/append-only/);
    });

    it('cannot go negative even if a caller bypasses the check', () => {
      expect(() =>
        db.prepare('UPDATE accounts SET balance = -1 WHERE id = ?').run(accountId),
      ).toThrow(/CHECK/);
    });
  });

  it('keeps the balance right across two stores (two processes) charging the same account', async () => {
    const other = openSqliteStore(file);
    try {
      // One after another: two connections in one process would wait on each other's file lock
      // while holding the event loop (processes wait in parallel; the SQLite contract test covers one store).
      let charged = 0;
      for (let i = 0; i < 20; i++) {
        try {
          await inTx(i % 2 === 0 ? store : other, (tx) =>
            charge(tx, accountId, `job_${i}`, 1, now),
          );
          charged++;
        } catch (err) {
          expect(err).toBeInstanceOf(InsufficientDiamonds);
        }
      }
      expect(charged).toBe(10);
      expect(await balanceOf(store, accountId)).toBe(0);
    } finally {
      await other.close();
    }
  });
});
