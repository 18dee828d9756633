import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/core/db/open';
import type { WritableDB } from '../../src/core/db/types';
import { createAccount } from '../../src/core/keys';
import { balanceOf, charge, entriesFor, grant, refund } from '../../src/core/ledger';
import { InsufficientDiamonds } from '../../src/core/errors';

const now = new Date('2026-11-22T10:00:00Z');
let dir: string;
let db: WritableDB;
let accountId: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-ledger-'));
  db = openDatabase(path.join(dir, 'core.db'));
  accountId = createAccount(db, { email: 'a@example.com', diamonds: 10 }, now).accountId;
});
afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('ledger', () => {
  it('records the opening balance as a grant', () => {
    expect(balanceOf(db, accountId)).toBe(10);
    expect(entriesFor(db, accountId).map((e) => [e.kind, e.amount])).toEqual([['grant', 10]]);
  });

  it('charges and refuses a charge the balance cannot cover, writing nothing', () => {
    expect(charge(db, accountId, 'job_1', 4, now)).toBe(6);
    expect(() => charge(db, accountId, 'job_2', 7, now)).toThrow(InsufficientDiamonds);
    expect(balanceOf(db, accountId)).toBe(6);
    expect(entriesFor(db, accountId)).toHaveLength(2);
  });

  it('refunds a charge exactly once', () => {
    charge(db, accountId, 'job_1', 4, now);
    expect(refund(db, 'job_1', now, 'failed')).toBe(4);
    expect(refund(db, 'job_1', now, 'failed again')).toBe(0);
    expect(balanceOf(db, accountId)).toBe(10);
    expect(entriesFor(db, accountId).filter((e) => e.kind === 'refund')).toHaveLength(1);
  });

  it('refuses a second charge for the same job at the database level', () => {
    charge(db, accountId, 'job_1', 1, now);
    expect(() => charge(db, accountId, 'job_1', 1, now)).toThrow(/UNIQUE/);
  });

  it('is append-only: updates and deletes are refused', () => {
    grant(db, accountId, 5, now);
    expect(() => db.prepare('UPDATE ledger SET amount = 1000').run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM ledger').run()).toThrow(/append-only/);
  });

  it('cannot go negative even if a caller bypasses the check', () => {
    expect(() => db.prepare('UPDATE accounts SET balance = -1 WHERE id = ?').run(accountId)).toThrow(/CHECK/);
  });

  it('keeps the balance right across two connections charging the same account', () => {
    const other = openDatabase(path.join(dir, 'core.db'));
    try {
      let charged = 0;
      for (let i = 0; i < 20; i++) {
        const conn = i % 2 === 0 ? db : other;
        try {
          conn.transaction(() => charge(conn, accountId, `job_${i}`, 1, now)).immediate();
          charged++;
        } catch (err) {
          expect(err).toBeInstanceOf(InsufficientDiamonds);
        }
      }
      expect(charged).toBe(10);
      expect(balanceOf(db, accountId)).toBe(0);
    } finally {
      other.close();
    }
  });
});
