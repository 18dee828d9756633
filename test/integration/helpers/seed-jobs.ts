/**
 * Jobs straight into a store, with no service in front (lease-loop tests): an account, a key and
 * `n` one-price photo_enhance jobs, their creation times a millisecond apart from `T0`.
 */
import { randomBytes } from 'node:crypto';
import type { Store } from '../../../src/core/store/types';

export const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const uid = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

/** An account, a key and `n` jobs of `units` pending units each, oldest first. */
export async function seedJobs(store: Store, n: number, units = 1): Promise<string[]> {
  const accountId = uid('acct');
  const keyId = uid('key');
  await store.transaction(async (tx) => {
    await tx.accounts.create({
      id: accountId,
      email: `${accountId}@example.test`,
      createdAt: new Date(T0).toISOString(),
    });
    await tx.keys.create({
      id: keyId,
      accountId,
      hash: uid('hash'),
      prefix: 'ds_test',
      dailyCap: 500,
      createdAt: new Date(T0).toISOString(),
    });
  });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = uid('job');
    await store.jobs.insert(
      {
        id,
        accountId,
        keyId,
        kind: 'generation',
        toolId: 'photo_enhance',
        price: 1,
        input: '{}',
        templateSetId: null,
        readySetId: null,
        createdAt: new Date(T0 + i).toISOString(),
      },
      Array.from({ length: units }, () => ({ shotId: null })),
    );
    ids.push(id);
  }
  return ids;
}
