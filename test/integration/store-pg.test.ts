/**
 * The Store contract (store-contract.ts) on PostgreSQL, each store on a fresh schema in this
 * file's database (migrated on open); then what only PostgreSQL has: deadlocks retried, a
 * failed statement ending its transaction, the key change marker across connections.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/core/store/pg/index';
import { DatabaseUnavailable } from '../../src/core/store/pg/url';
import type { Store } from '../../src/core/store/types';
import { describePostgres } from '../support/postgres';
import { describeStoreContract } from './store-contract';

const T0 = '2026-11-22T10:00:00.000Z';
const uid = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

describePostgres('PostgreSQL store', (databaseUrl) => {
  const freshStore = (schema = `store_${randomBytes(6).toString('hex')}`) =>
    openPostgresStore(databaseUrl(), { schema, max: 12, applicationName: 'store-contract' });

  describeStoreContract('postgres', () => freshStore());

  describe('PostgreSQL only', () => {
    let schema: string;
    let store: Store;
    beforeEach(async () => {
      schema = `pgonly_${randomBytes(6).toString('hex')}`;
      store = await freshStore(schema);
    });
    afterEach(async () => {
      await store.close();
    });

    async function account(balance: number): Promise<string> {
      const id = uid('acct');
      await store.transaction(async (tx) => {
        await tx.accounts.create({ id, email: `${id}@example.test`, createdAt: T0 });
        await tx.ledger.append({
          accountId: id,
          kind: 'grant',
          amount: balance,
          jobId: null,
          note: null,
          createdAt: T0,
        });
      });
      return id;
    }

    it('re-runs a transaction the server chose as a deadlock victim; both transfers land exactly once', async () => {
      const [a, b] = [await account(100), await account(100)];
      // Each transaction locks one account, waits until the other has locked the other one, then
      // reaches for it: a certain deadlock on the first attempt. Re-runs skip the rendezvous.
      let arrived = 0;
      let release: () => void = () => undefined;
      const bothLocked = new Promise<void>((resolve) => (release = resolve));
      const attempts = { ab: 0, ba: 0 };
      const move = (from: string, to: string, name: 'ab' | 'ba') =>
        store.transaction(async (tx) => {
          attempts[name]++;
          await tx.ledger.balanceOf(from, { forUpdate: true });
          if (attempts[name] === 1) {
            if (++arrived === 2) release();
            await bothLocked;
          }
          await tx.ledger.balanceOf(to, { forUpdate: true });
          await tx.ledger.append({
            accountId: from,
            kind: 'charge',
            amount: -10,
            jobId: uid('job'),
            note: null,
            createdAt: T0,
          });
          await tx.ledger.append({
            accountId: to,
            kind: 'grant',
            amount: 10,
            jobId: null,
            note: null,
            createdAt: T0,
          });
        });
      await Promise.all([move(a, b, 'ab'), move(b, a, 'ba')]);
      // One of them was the victim and ran again (a re-run can, rarely, lose a second race).
      expect(attempts.ab + attempts.ba).toBeGreaterThanOrEqual(3);
      expect(await store.ledger.balanceOf(a)).toBe(100);
      expect(await store.ledger.balanceOf(b)).toBe(100);
      expect((await store.ledger.entriesFor(a)).map((e) => e.kind)).toHaveLength(3);
      expect((await store.ledger.entriesFor(b)).map((e) => e.kind)).toHaveLength(3);
    });

    it('refuses to commit a transaction whose failed statement fn swallowed (PostgreSQL would roll it back silently)', async () => {
      const accountId = await account(10);
      const jobId = uid('job');
      await store.ledger.append({
        accountId,
        kind: 'charge',
        amount: -2,
        jobId,
        note: null,
        createdAt: T0,
      });
      const attempt = store.transaction(async (tx) => {
        await tx.ledger.append({
          accountId,
          kind: 'grant',
          amount: 5,
          jobId: null,
          note: 'lost with the rest',
          createdAt: T0,
        });
        try {
          await tx.ledger.append({
            accountId,
            kind: 'charge',
            amount: -2,
            jobId,
            note: null,
            createdAt: T0,
          }); // second charge of the job
        } catch {
          // swallowed: on SQLite the transaction could go on; on PostgreSQL it is over
        }
        return 'done';
      });
      await expect(attempt).rejects.toThrow(
        /transaction rolled back: a statement in it failed .*ledger_one_charge_per_job/,
      );
      expect(await store.ledger.balanceOf(accountId)).toBe(8);
      expect(await store.ledger.entriesFor(accountId)).toHaveLength(2);
    });

    it('a revoke committed through one pool moves the key change marker another pool reads; a rolled-back one does not', async () => {
      const other = await freshStore(schema);
      try {
        const accountId = await account(0);
        const [k1, k2] = [uid('key'), uid('key')];
        for (const id of [k1, k2])
          await store.keys.create({
            id,
            accountId,
            hash: uid('hash'),
            prefix: 'ds_live_test',
            dailyCap: 5,
            createdAt: T0,
          });
        const before = await other.keys.changeMarker();

        await expect(
          store.transaction(async (tx) => {
            expect(await tx.keys.revoke(k1, T0)).toBe('revoked');
            throw new Error('abandoned');
          }),
        ).rejects.toThrow('abandoned');
        expect(await other.keys.changeMarker()).toBe(before);
        expect(await other.keys.findActiveById(k1)).toBeDefined();

        expect(await store.keys.revoke(k2, T0)).toBe('revoked');
        const after = await other.keys.changeMarker();
        expect(after).not.toBe(before);
        expect(await other.keys.findActiveById(k2)).toBeUndefined();
        // Nothing changed: the marker stays.
        expect(await store.keys.revoke(k2, T0)).toBe('already revoked');
        expect(await other.keys.changeMarker()).toBe(after);
      } finally {
        await other.close();
      }
    });

    it('opening with a wrong password fails with DatabaseUnavailable and never shows the password', async () => {
      const url = new URL(databaseUrl());
      url.password = 'wrong-Pa55word-xyz';
      const failure = await openPostgresStore(url.toString(), { schema }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(DatabaseUnavailable);
      expect((failure as DatabaseUnavailable).code).toBe('28P01');
      expect(`${(failure as Error).message}${(failure as Error).stack}`).not.toContain(
        'wrong-Pa55word-xyz',
      );
    });
  });
});
