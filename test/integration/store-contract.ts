/**
 * The contract every Store implementation keeps (src/core/store/types.ts), run on a real
 * database: `store-sqlite.test.ts` runs it on a SQLite file, the PostgreSQL tests on a real
 * server. Dialect-neutral: only the Store interface is used.
 *
 * `makeStore` must return a store on an empty, migrated database (each call a fresh one).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobRow, Store } from '../../src/core/store/types';

const T0 = '2026-11-22T10:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const uid = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function describeStoreContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    async function account(balance = 0, email = `${uid('u')}@example.test`): Promise<string> {
      const id = uid('acct');
      await store.transaction(async (tx) => {
        await tx.accounts.create({ id, email, createdAt: T0 });
        await tx.ledger.append({
          accountId: id,
          kind: 'grant',
          amount: balance,
          jobId: null,
          note: 'opening balance',
          createdAt: T0,
        });
      });
      return id;
    }
    async function key(accountId: string, createdAt = T0, dailyCap = 500): Promise<string> {
      const id = uid('key');
      await store.keys.create({
        id,
        accountId,
        hash: uid('hash'),
        prefix: 'ds_live_abcd',
        dailyCap,
        createdAt,
      });
      return id;
    }
    async function job(
      accountId: string,
      keyId: string,
      opts: { units?: number; createdAt?: string; price?: number } = {},
    ): Promise<string> {
      const id = uid('job');
      const units = Array.from({ length: opts.units ?? 1 }, (_, i) => ({
        shotId: opts.units ? `shot-${i}` : null,
      }));
      await store.jobs.insert(
        {
          id,
          accountId,
          keyId,
          kind: opts.units ? 'catalog' : 'generation',
          toolId: 'virtual_model',
          price: opts.price ?? 4,
          input: '{"units":[]}',
          templateSetId: null,
          readySetId: null,
          createdAt: opts.createdAt ?? T0,
        },
        units,
      );
      return id;
    }
    async function blob(
      accountId: string | null,
      sha256: string,
      size: number,
      id = uid('b'),
    ): Promise<string> {
      await store.blobs.insert({
        id,
        sha256,
        mime: 'image/png',
        size,
        accountId,
        origin: accountId ? 'upload' : 'result',
        createdAt: T0,
      });
      return id;
    }

    describe('accounts and keys', () => {
      it('creates an account on the free plan, finds it by e-mail in any case, refuses a second with the same e-mail', async () => {
        const id = await account(7, 'Mixed.Case@Example.test');
        expect(await store.accounts.idByEmail('mixed.case@example.TEST')).toBe(id);
        expect(await store.accounts.idByEmail('nobody@example.test')).toBeUndefined();
        const row = await store.accounts.get(id);
        expect(row).toMatchObject({
          id,
          email: 'Mixed.Case@Example.test',
          balance: 7,
          planStatus: 'active',
          planIsPremium: false,
          planCancelAtPeriodEnd: false,
          planRenewsAt: null,
          createdAt: T0,
        });
        expect(typeof row!.planProductId).toBe('string');
        await expect(
          store.accounts.create({
            id: uid('acct'),
            email: 'MIXED.case@example.test',
            createdAt: T0,
          }),
        ).rejects.toThrow();
        expect(await store.accounts.get('acct_missing')).toBeUndefined();
      });

      it('finds active keys by hash and id, counts them, names the oldest, and revokes once', async () => {
        const email = `${uid('k')}@example.test`;
        const accountId = await account(0, email);
        const later = await key(accountId, at(5), 50);
        const older = await key(accountId, at(1), 60);
        expect(await store.keys.countActive(accountId)).toBe(2);
        expect(await store.keys.firstActiveIdByEmail(email.toUpperCase())).toBe(older);
        expect(await store.keys.findActiveById(later)).toEqual({
          keyId: later,
          accountId,
          dailyCap: 50,
        });

        const hash = uid('hash');
        const third = uid('key');
        await store.keys.create({
          id: third,
          accountId,
          hash,
          prefix: 'ds_live_wxyz',
          dailyCap: 9,
          createdAt: at(9),
        });
        expect(await store.keys.findActiveByHash(hash)).toEqual({
          keyId: third,
          accountId,
          dailyCap: 9,
        });
        await expect(
          store.keys.create({
            id: uid('key'),
            accountId,
            hash,
            prefix: 'ds_live_dup',
            dailyCap: 9,
            createdAt: at(9),
          }),
        ).rejects.toThrow();

        expect(await store.keys.revoke(older, at(10))).toBe('revoked');
        expect(await store.keys.revoke(older, at(11))).toBe('already revoked');
        expect(await store.keys.revoke('key_missing', at(11))).toBe('missing');
        expect(await store.keys.findActiveById(older)).toBeUndefined();
        expect(await store.keys.firstActiveIdByEmail(email)).toBe(later);
        expect(await store.keys.countActive(accountId)).toBe(2);
        await store.keys.revoke(third, at(12));
        expect(await store.keys.findActiveByHash(hash)).toBeUndefined();
        expect(['number', 'string']).toContain(typeof (await store.keys.changeMarker()));
      });
    });

    describe('ledger', () => {
      it('appends entries with the running balance, refuses an overdraft and a second charge of a job, writing nothing', async () => {
        const accountId = await account(10);
        const jobId = uid('job');
        expect(
          await store.ledger.append({
            accountId,
            kind: 'charge',
            amount: -4,
            jobId,
            note: null,
            createdAt: at(1),
          }),
        ).toBe(6);
        await expect(
          store.ledger.append({
            accountId,
            kind: 'charge',
            amount: -1,
            jobId,
            note: null,
            createdAt: at(2),
          }),
        ).rejects.toThrow();
        await expect(
          store.ledger.append({
            accountId,
            kind: 'charge',
            amount: -7,
            jobId: uid('job'),
            note: null,
            createdAt: at(2),
          }),
        ).rejects.toThrow();
        expect(await store.ledger.balanceOf(accountId)).toBe(6);
        expect(await store.ledger.chargeOf(jobId)).toEqual({ accountId, amount: -4 });
        expect(await store.ledger.hasRefund(jobId)).toBe(false);
        expect(
          await store.ledger.append({
            accountId,
            kind: 'refund',
            amount: 4,
            jobId,
            note: 'failed',
            createdAt: at(3),
          }),
        ).toBe(10);
        expect(await store.ledger.hasRefund(jobId)).toBe(true);
        await expect(
          store.ledger.append({
            accountId,
            kind: 'refund',
            amount: 4,
            jobId,
            note: 'again',
            createdAt: at(4),
          }),
        ).rejects.toThrow();

        const entries = await store.ledger.entriesFor(accountId);
        expect(entries.map((e) => [e.kind, e.amount, e.balanceAfter, e.jobId])).toEqual([
          ['grant', 10, 10, null],
          ['charge', -4, 6, jobId],
          ['refund', 4, 10, jobId],
        ]);
        expect(entries[2]).toMatchObject({ accountId, note: 'failed', createdAt: at(3) });
        expect(entries[0]!.id).toBeLessThan(entries[1]!.id);
        expect(await store.ledger.balanceOf('acct_missing')).toBeUndefined();
        expect(await store.ledger.chargeOf('job_missing')).toBeUndefined();
      });

      it('concurrent check-then-charge transactions never overdraw: exactly balance / price of them charge', async () => {
        const accountId = await account(30);
        const attempts = Array.from({ length: 25 }, () =>
          store.transaction(async (tx) => {
            const balance = await tx.ledger.balanceOf(accountId, { forUpdate: true });
            if (balance === undefined || balance < 3) return false;
            await tx.ledger.append({
              accountId,
              kind: 'charge',
              amount: -3,
              jobId: uid('job'),
              note: null,
              createdAt: at(1),
            });
            return true;
          }),
        );
        const charged = (await Promise.all(attempts)).filter(Boolean).length;
        expect(charged).toBe(10);
        expect(await store.ledger.balanceOf(accountId)).toBe(0);
        const entries = await store.ledger.entriesFor(accountId);
        expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(0);
        expect(entries.every((e) => e.balanceAfter >= 0)).toBe(true);
        expect(entries.map((e) => e.balanceAfter)).toEqual([
          30, 27, 24, 21, 18, 15, 12, 9, 6, 3, 0,
        ]);
      });

      it('a transaction that throws leaves nothing behind', async () => {
        const accountId = await account(10);
        const email = `${uid('gone')}@example.test`;
        await expect(
          store.transaction(async (tx) => {
            await tx.accounts.create({ id: uid('acct'), email, createdAt: T0 });
            await tx.ledger.append({
              accountId,
              kind: 'charge',
              amount: -5,
              jobId: uid('job'),
              note: null,
              createdAt: at(1),
            });
            throw new Error('changed my mind');
          }),
        ).rejects.toThrow('changed my mind');
        expect(await store.accounts.idByEmail(email)).toBeUndefined();
        expect(await store.ledger.balanceOf(accountId)).toBe(10);
        expect(await store.ledger.entriesFor(accountId)).toHaveLength(1);
      });
    });

    describe('request counts', () => {
      it('counts exactly up to the cap under concurrent increments, per key and day', async () => {
        const accountId = await account();
        const keyId = await key(accountId);
        const day = '2026-11-22';
        const results = await Promise.all(
          Array.from({ length: 40 }, () => store.requests.increment(keyId, day, 25)),
        );
        const accepted = results.filter((r) => !r.refused);
        expect(accepted).toHaveLength(25);
        expect(accepted.map((r) => r.count).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 25 }, (_, i) => i + 1),
        );
        expect(results.filter((r) => r.refused).every((r) => r.count === 25)).toBe(true);
        expect(await store.requests.get(keyId, day)).toBe(25);
        expect(await store.requests.increment(keyId, '2026-11-23', 25)).toEqual({
          count: 1,
          refused: false,
        });
        expect(await store.requests.get(keyId, '2026-11-21')).toBe(0);
      });
    });

    describe('idempotency', () => {
      it('stores an answer, keeps the first against a fresh duplicate, replaces an expired one, forgets on delete', async () => {
        const accountId = await account();
        const row = {
          accountId,
          endpoint: 'generations',
          key: 'k-1',
          bodyHash: 'h1',
          status: 202,
          body: { success: true, id: 'job_1' },
          createdAt: at(0),
        };
        expect(await store.idempotency.get(accountId, 'generations', 'k-1')).toBeUndefined();
        expect(await store.idempotency.put(row, at(-1440))).toBe(true);
        expect(await store.idempotency.get(accountId, 'generations', 'k-1')).toEqual(row);
        expect(await store.idempotency.get(accountId, 'uploads', 'k-1')).toBeUndefined();

        const rival = {
          ...row,
          bodyHash: 'h2',
          body: { success: true, id: 'job_2' },
          createdAt: at(1),
        };
        expect(await store.idempotency.put(rival, at(-1439))).toBe(false);
        expect((await store.idempotency.get(accountId, 'generations', 'k-1'))?.body).toEqual({
          success: true,
          id: 'job_1',
        });

        const dayLater = { ...rival, createdAt: at(1500) };
        expect(await store.idempotency.put(dayLater, at(60))).toBe(true);
        expect(await store.idempotency.get(accountId, 'generations', 'k-1')).toEqual(dayLater);

        await store.idempotency.delete(accountId, 'generations', 'k-1');
        expect(await store.idempotency.get(accountId, 'generations', 'k-1')).toBeUndefined();
      });
    });

    describe('jobs and units', () => {
      it('stores a job with its units, completes and fails units once, finishes once', async () => {
        const accountId = await account();
        const keyId = await key(accountId);
        const id = await job(accountId, keyId, { units: 3 });
        expect(await store.jobs.get(id)).toEqual<JobRow>({
          id,
          accountId,
          keyId,
          kind: 'catalog',
          toolId: 'virtual_model',
          status: 'processing',
          price: 4,
          input: '{"units":[]}',
          errorMessage: null,
          readySetId: null,
          createdAt: T0,
          // Team mode counts a worker's lapsed leases (crash loops); none yet.
          ...(store.dialect === 'postgres' ? { leaseLapses: 0 } : {}),
        });
        expect(await store.jobs.unitsOf(id)).toEqual(
          [0, 1, 2].map((idx) => ({
            idx,
            shotId: `shot-${idx}`,
            status: 'pending',
            errorMessage: null,
          })),
        );

        const [b0, b1, b2] = [
          await blob(null, 'a'.repeat(64), 10),
          await blob(null, 'b'.repeat(64), 10),
          await blob(null, 'c'.repeat(64), 10),
        ];
        expect(await store.jobs.completeUnit(id, 2, [b1, b2])).toBe(true);
        expect(await store.jobs.completeUnit(id, 0, [b0])).toBe(true);
        expect(await store.jobs.completeUnit(id, 0, [b1])).toBe(false);
        expect(await store.jobs.failUnit(id, 0, 'late')).toBe(false);
        expect(await store.jobs.failUnit(id, 1, 'the provider refused')).toBe(true);
        expect(await store.jobs.resultsOf(id)).toEqual([
          { unitIdx: 0, n: 0, blobId: b0 },
          { unitIdx: 2, n: 0, blobId: b1 },
          { unitIdx: 2, n: 1, blobId: b2 },
        ]);
        expect((await store.jobs.unitsOf(id)).map((u) => [u.status, u.errorMessage])).toEqual([
          ['completed', null],
          ['failed', 'the provider refused'],
          ['completed', null],
        ]);

        await store.jobs.recordProviderCost(id, 'fal', 0.25);
        await store.jobs.recordProviderCost(id, 'fal', null);
        expect(await store.jobs.processingIds()).toEqual([id]);
        expect(await store.jobs.finish(id, 'completed', null, at(5))).toBe(true);
        expect(await store.jobs.finish(id, 'failed', 'again', at(6))).toBe(false);
        expect(await store.jobs.get(id)).toMatchObject({ status: 'completed', errorMessage: null });
        expect(await store.jobs.processingIds()).toEqual([]);
        expect(await store.jobs.get('job_missing')).toBeUndefined();
      });

      it('counts an interruption only for units a crash cut while started', async () => {
        const accountId = await account();
        const keyId = await key(accountId);
        const id = await job(accountId, keyId, { units: 3 });
        await store.jobs.markUnitStarted(id, 0, at(1));
        await store.jobs.markUnitStarted(id, 1, at(1));
        await store.jobs.clearUnitsStarted([{ jobId: id, idx: 1 }]);
        expect(await store.jobs.countInterruptions()).toEqual([
          { jobId: id, idx: 0, interruptions: 1 },
        ]);
        expect(await store.jobs.countInterruptions()).toEqual([]);
        await store.jobs.markUnitStarted(id, 0, at(2));
        expect(await store.jobs.countInterruptions()).toEqual([
          { jobId: id, idx: 0, interruptions: 2 },
        ]);
      });

      it('leases each processing job to one worker at a time; renew, release and expiry hand it over', async () => {
        const accountId = await account();
        const keyId = await key(accountId);
        const older = await job(accountId, keyId, { createdAt: at(1) });
        const newer = await job(accountId, keyId, { createdAt: at(2) });
        const done = await job(accountId, keyId, { createdAt: at(0) });
        await store.jobs.finish(done, 'failed', 'x', at(3));

        expect(await store.jobs.claim('w1', 60_000, 1)).toEqual([older]);
        expect(await store.jobs.claim('w2', 60_000, 5)).toEqual([newer]);
        expect(await store.jobs.claim('w3', 60_000, 5)).toEqual([]);
        expect(await store.jobs.renewLease('w1', 60_000)).toEqual([older]);

        // A worker that does not hold the lease writes nothing.
        expect(await store.jobs.completeUnit(older, 0, [], 'w2')).toBe(false);
        expect(await store.jobs.failUnit(older, 0, 'not mine', 'w2')).toBe(false);
        expect((await store.jobs.unitsOf(older))[0]!.status).toBe('pending');

        expect(await store.jobs.releaseLeases('w1')).toBe(1);
        expect(await store.jobs.renewLease('w1', 60_000)).toEqual([]);
        expect(await store.jobs.claim('w3', 60_000, 5)).toEqual([older]);
        expect(await store.jobs.failUnit(older, 0, 'mine', 'w3')).toBe(true);

        // An expired lease is claimable by another worker; the old holder then writes nothing.
        expect(await store.jobs.releaseLeases('w2')).toBe(1);
        expect(await store.jobs.claim('w4', 1, 5)).toEqual([newer]);
        await sleep(25);
        expect(await store.jobs.claim('w5', 60_000, 5)).toEqual([newer]);
        expect(await store.jobs.completeUnit(newer, 0, [], 'w4')).toBe(false);
        expect(await store.jobs.renewLease('w4', 60_000)).toEqual([]);
        expect(await store.jobs.completeUnit(newer, 0, [], 'w5')).toBe(true);

        // Finishing a job lets its lease go: it is never claimed again.
        expect(await store.jobs.finish(newer, 'completed', null, at(9))).toBe(true);
        expect(await store.jobs.renewLease('w5', 60_000)).toEqual([]);
        expect(await store.jobs.claim('w6', 60_000, 5)).toEqual([]); // older is still w3's
      });

      it('concurrent claims never hand one job to two workers', async () => {
        const accountId = await account();
        const keyId = await key(accountId);
        const ids = [];
        for (let i = 0; i < 12; i++) ids.push(await job(accountId, keyId, { createdAt: at(i) }));
        const claims = await Promise.all(
          Array.from({ length: 6 }, (_, w) => store.jobs.claim(`worker-${w}`, 60_000, 3)),
        );
        const all = claims.flat();
        expect(new Set(all).size).toBe(all.length);
        expect(all.sort()).toEqual([...ids].sort());
      });
    });

    describe('template sets', () => {
      it('inserts, reads within the account only, lists newest first, deletes once', async () => {
        const accountId = await account();
        const other = await account();
        const base = {
          accountId,
          label: 'Look',
          toolId: 'virtual_model',
          images: { fashion_model: 'fm_1', venue: 'https://example.test/v.png' },
          pose: 'p1',
          shotType: null,
          stylePreset: null,
          ratio: '3:4',
          coverUrl: null,
          sourceJobId: null,
        };
        const first = uid('ts');
        const second = uid('ts');
        await store.templates.insert({ ...base, id: first, createdAt: at(1) });
        await store.templates.insert({ ...base, id: second, label: 'Later', createdAt: at(2) });
        const { accountId: _a, sourceJobId: _s, ...row } = { ...base, id: first, createdAt: at(1) };
        expect(await store.templates.get(accountId, first)).toEqual(row);
        expect(await store.templates.get(other, first)).toBeUndefined();
        expect((await store.templates.list(accountId)).map((t) => t.id)).toEqual([second, first]);
        expect(await store.templates.list(other)).toEqual([]);
        expect(await store.templates.delete(other, first)).toBe(false);
        expect(await store.templates.delete(accountId, first)).toBe(true);
        expect(await store.templates.delete(accountId, first)).toBe(false);
        expect((await store.templates.list(accountId)).map((t) => t.id)).toEqual([second]);
      });
    });

    describe('blob rows', () => {
      it("names content by public id, sums an account's distinct content, lists what is recorded", async () => {
        const accountId = await account();
        const other = await account();
        const [sha1, sha2, sha3] = ['1'.repeat(64), '2'.repeat(64), '3'.repeat(64)];
        const id1 = await blob(accountId, sha1, 100);
        await blob(accountId, sha1, 100); // the same content again: counted once
        await blob(accountId, sha2, 50);
        await blob(null, sha3, 7);
        expect(await store.blobs.get(id1)).toEqual({
          id: id1,
          sha256: sha1,
          mime: 'image/png',
          size: 100,
        });
        expect(await store.blobs.get('b_missing')).toBeUndefined();
        expect(await store.blobs.accountBytes(accountId)).toBe(150);
        expect(await store.blobs.accountBytes(other)).toBe(0);
        expect(await store.blobs.accountHolds(accountId, sha2)).toBe(true);
        expect(await store.blobs.accountHolds(other, sha2)).toBe(false);
        expect(await store.blobs.accountHolds(accountId, sha3)).toBe(false);
        expect(await store.blobs.isRecorded(sha3)).toBe(true);
        expect(await store.blobs.isRecorded('4'.repeat(64))).toBe(false);
        expect(await store.blobs.recordedShas()).toEqual(new Set([sha1, sha2, sha3]));
      });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
