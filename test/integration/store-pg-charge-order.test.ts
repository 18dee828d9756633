/**
 * The service's charge path on PostgreSQL, in its own order: a transaction inserts the job (its
 * foreign key takes a KEY SHARE lock on the account row), then locks the balance and charges.
 * Many such transactions of one account at once must queue on the balance, not deadlock: a
 * balance lock that conflicted with the foreign key's lock made each pair a deadlock, and eight
 * at once used up the retries (a 500 for concurrent POST /v1/generations of one account).
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { openPostgresStore } from '../../src/core/store/pg/index';
import { describePostgres } from '../support/postgres';

const T0 = '2026-11-23T10:00:00.000Z';
const uid = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

describePostgres('PostgreSQL charge path order', (databaseUrl) => {
  it('16 concurrent insert-job-then-charge transactions of one account all commit, each charge once, balance exact', async () => {
    const store = await openPostgresStore(databaseUrl(), {
      schema: `charge_${randomBytes(5).toString('hex')}`,
      max: 16,
    });
    try {
      const accountId = uid('acct');
      const keyId = uid('key');
      await store.transaction(async (tx) => {
        await tx.accounts.create({
          id: accountId,
          email: `${accountId}@example.test`,
          createdAt: T0,
        });
        await tx.keys.create({
          id: keyId,
          accountId,
          hash: uid('hash'),
          prefix: 'ds_test',
          dailyCap: 500,
          createdAt: T0,
        });
        await tx.ledger.append({
          accountId,
          kind: 'grant',
          amount: 100,
          jobId: null,
          note: null,
          createdAt: T0,
        });
      });
      const attempts = new Map<string, number>();
      const create = (jobId: string) =>
        store.transaction(async (tx) => {
          attempts.set(jobId, (attempts.get(jobId) ?? 0) + 1);
          await tx.jobs.insert(
            {
              id: jobId,
              accountId,
              keyId,
              kind: 'generation',
              toolId: 'photo_enhance',
              price: 3,
              input: '{}',
              templateSetId: null,
              readySetId: null,
              createdAt: T0,
            },
            [{ shotId: null }],
          );
          const balance = await tx.ledger.balanceOf(accountId, { forUpdate: true });
          if (balance === undefined || balance < 3) throw new Error('insufficient');
          return tx.ledger.append({
            accountId,
            kind: 'charge',
            amount: -3,
            jobId,
            note: null,
            createdAt: T0,
          });
        });
      const jobIds = Array.from({ length: 16 }, () => uid('job'));
      const results = await Promise.allSettled(jobIds.map(create));
      expect(
        results
          .filter((r) => r.status === 'rejected')
          .map((r) => String((r as PromiseRejectedResult).reason)),
      ).toEqual([]);
      expect(await store.ledger.balanceOf(accountId)).toBe(100 - 16 * 3);
      const charges = (await store.ledger.entriesFor(accountId)).filter((e) => e.kind === 'charge');
      expect(charges.map((e) => e.jobId).sort()).toEqual([...jobIds].sort());
      expect(charges.map((e) => e.balanceAfter).sort((a, b) => b - a)).toEqual(
        Array.from({ length: 16 }, (_, i) => 100 - 3 * (i + 1)),
      );
      // Queued, not deadlocked: no transaction had to run again.
      expect(Math.max(...attempts.values())).toBe(1);
    } finally {
      await store.close();
    }
  }, 60_000);
});
