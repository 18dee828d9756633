/**
 * The daily cap on PostgreSQL as the service counts it (`requests.admit`, request-allowance.ts):
 * each store (as each `serve` process) admits a busy key's requests from an allowance taken
 * ahead, yet across stores no more than the cap are admitted, the last one before the cap is
 * admitted even while another store holds counts ahead, and what a store did not use comes back
 * to the shared count when it closes. Three stores on one schema stand for three processes.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { openPostgresStore } from '../../src/core/store/pg/index';
import { openPgPool } from '../../src/core/store/pg/pool';
import type { Store } from '../../src/core/store/types';
import { describePostgres } from '../support/postgres';

const T0 = '2026-11-22T10:00:00.000Z';
const DAY = '2026-11-22';

type Admit = { admit(keyId: string, day: string, cap: number): Promise<{ refused: boolean }> };
const admitOn = (store: Store) => store.requests as unknown as Admit;

describePostgres('PostgreSQL daily cap from per-process allowances', (databaseUrl) => {
  let stores: Store[];
  let schema: string;
  beforeEach(async () => {
    schema = `allow_${randomBytes(6).toString('hex')}`;
    stores = [];
    for (let i = 0; i < 3; i++)
      stores.push(await openPostgresStore(databaseUrl(), { schema, max: 4 }));
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
  });

  async function key(cap: number): Promise<{ keyId: string; cap: number }> {
    const id = `k_${randomBytes(6).toString('hex')}`;
    await stores[0]!.transaction(async (tx) => {
      await tx.accounts.create({ id: `a_${id}`, email: `${id}@example.test`, createdAt: T0 });
      await tx.keys.create({
        id,
        accountId: `a_${id}`,
        hash: id,
        prefix: 'ds_',
        dailyCap: cap,
        createdAt: T0,
      });
    });
    return { keyId: id, cap };
  }

  it('calls alternating between stores: the cap-th is admitted and the next refused on every store', async () => {
    const { keyId, cap } = await key(60);
    const admitted: boolean[] = [];
    for (let i = 0; i < cap; i++)
      admitted.push(!(await admitOn(stores[i % 3]!).admit(keyId, DAY, cap)).refused);
    expect(admitted.every(Boolean)).toBe(true);
    for (const s of stores) expect((await admitOn(s).admit(keyId, DAY, cap)).refused).toBe(true);
    await Promise.all(stores.map((s) => s.close()));
    const check = await openPostgresStore(databaseUrl(), { schema, max: 1 });
    try {
      expect(await check.requests.get(keyId, DAY)).toBe(cap);
    } finally {
      await check.close();
    }
  });

  it('bursts at three stores at once admit exactly the cap, and a store gives back what it took ahead when it closes', async () => {
    const { keyId, cap } = await key(500);
    // Warm the rate up on store 0 so it takes ahead, then burst everywhere.
    for (let i = 0; i < 20; i++) await admitOn(stores[0]!).admit(keyId, DAY, cap);
    const results = await Promise.all(
      stores.flatMap((s) => Array.from({ length: 250 }, () => admitOn(s).admit(keyId, DAY, cap))),
    );
    expect(results.filter((r) => !r.refused)).toHaveLength(cap - 20);
    expect(await stores[1]!.requests.get(keyId, DAY)).toBe(cap);

    // Below the cap: store 0 takes ahead of a steady stream; its unused part comes back on close.
    const other = await key(10_000);
    let sent = 0;
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 20 }, () => admitOn(stores[0]!).admit(other.keyId, DAY, other.cap)),
      );
      sent += 20;
    }
    expect(await stores[1]!.requests.get(other.keyId, DAY)).toBeGreaterThan(sent);
    await stores[0]!.close();
    expect(await stores[1]!.requests.get(other.keyId, DAY)).toBe(sent);
  });

  it('near the cap a store waits for what another holds ahead instead of refusing early', async () => {
    const { keyId, cap } = await key(40);
    // Store 0 under a steady stream holds counts ahead of its requests.
    for (let round = 0; round < 3; round++)
      await Promise.all(
        Array.from({ length: 5 }, () => admitOn(stores[0]!).admit(keyId, DAY, cap)),
      );
    const held = (await stores[2]!.requests.get(keyId, DAY)) - 15;
    expect(held).toBeGreaterThan(0);
    // Store 1 asks for the rest one by one: every one of the 25 left is admitted, then refused.
    let admitted = 0;
    for (;;) {
      if ((await admitOn(stores[1]!).admit(keyId, DAY, cap)).refused) break;
      admitted++;
    }
    expect(admitted).toBe(cap - 15);
    expect(await stores[2]!.requests.get(keyId, DAY)).toBe(cap);
  });

  it('a hold whose process died stays counted once it expires, and only then is a refusal at the cap final', async () => {
    const { keyId, cap } = await key(10);
    const handle = openPgPool(databaseUrl(), { schema, max: 1 });
    const take = async (
      holder: string,
      unused: number,
      need: number,
      want: number,
      holdMs: number,
    ) =>
      (
        await handle.pool.query<{ granted: number; total: number; others: number }>(
          'SELECT granted, total, others FROM key_usage_take($1, $2, $3, $4, $5, $6, $7, $8)',
          [keyId, DAY, holder, unused, need, want, cap, holdMs],
        )
      ).rows[0]!;
    try {
      // "dead" takes 1 for a request and holds up to half the rest ahead, then is never heard of again.
      expect(await take('dead', 0, 1, 8, 300)).toEqual({ granted: 5, total: 5, others: 0 });
      // "alive" takes the rest; at the cap it is told 4 are still held elsewhere: not final yet.
      expect(await take('alive', 0, 5, 5, 300)).toEqual({ granted: 5, total: 10, others: 4 });
      expect(await take('alive', 0, 1, 1, 300)).toEqual({ granted: 0, total: 10, others: 4 });
      await delay(400);
      // Expired: what "dead" held counts as used, and nothing is held any more.
      expect(await take('alive', 0, 1, 1, 300)).toEqual({ granted: 0, total: 10, others: 0 });
      // A live holder gives back what it did not use: "alive" held nothing ahead, "late" does.
      const other = await key(10);
      const t = (holder: string, unused: number, need: number, want: number) =>
        handle.pool
          .query<{ granted: number; total: number; others: number }>(
            'SELECT granted, total, others FROM key_usage_take($1, $2, $3, $4, $5, $6, $7, $8)',
            [other.keyId, DAY, holder, unused, need, want, other.cap, 5_000],
          )
          .then((r) => r.rows[0]!);
      expect(await t('late', 0, 1, 6)).toEqual({ granted: 5, total: 5, others: 0 });
      expect(await t('late', 3, 0, 0)).toEqual({ granted: 0, total: 2, others: 0 });
    } finally {
      await handle.pool.end();
    }
  });
});
