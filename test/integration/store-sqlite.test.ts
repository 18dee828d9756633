/** The Store contract on the SQLite store (a fresh file per test), plus what only SQLite promises. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/core/store/sqlite';
import { describeStoreContract } from './store-contract';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-store-'));
let n = 0;
const freshFile = () => path.join(root, `core-${n++}.db`);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describeStoreContract('SQLite', async () => openSqliteStore(freshFile()));

describe('SQLite store', () => {
  it('writes batched request counts on close: a reopened file has them', async () => {
    const file = freshFile();
    let store = openSqliteStore(file);
    await store.transaction(async (tx) => {
      await tx.accounts.create({
        id: 'acct_1',
        email: 'a@example.test',
        createdAt: '2026-11-22T10:00:00.000Z',
      });
      await tx.keys.create({
        id: 'key_1',
        accountId: 'acct_1',
        hash: 'h',
        prefix: 'p',
        dailyCap: 5,
        createdAt: '2026-11-22T10:00:00.000Z',
      });
    });
    for (let i = 0; i < 3; i++) await store.requests.increment('key_1', '2026-11-22', 5);
    await store.close();
    store = openSqliteStore(file);
    expect(await store.requests.get('key_1', '2026-11-22')).toBe(3);
    expect(await store.requests.increment('key_1', '2026-11-22', 3)).toEqual({
      count: 3,
      refused: true,
    });
    await store.close();
  });

  it('makes outer callers wait while a transaction is open, and refuses the outer store inside one', async () => {
    const store = openSqliteStore(freshFile());
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tx = store.transaction(async (t) => {
      await t.accounts.create({
        id: 'acct_1',
        email: 'a@example.test',
        createdAt: '2026-11-22T10:00:00.000Z',
      });
      await held;
      order.push('tx done');
    });
    const outside = store.accounts.idByEmail('a@example.test').then((id) => {
      order.push(`outside saw ${id}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]); // the outer read waits instead of seeing uncommitted rows
    release();
    await Promise.all([tx, outside]);
    expect(order).toEqual(['tx done', 'outside saw acct_1']);
    await expect(
      store.transaction(async () => store.accounts.idByEmail('a@example.test')),
    ).rejects.toThrow(/use the transaction store/);
    expect(await store.accounts.idByEmail('a@example.test')).toBe('acct_1');
    await store.close();
  });
});
