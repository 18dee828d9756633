/**
 * The daily cap on PostgreSQL as the service counts it (`requests.admit`, request-allowance.ts):
 * each store (as each `serve` process) admits a busy key's requests from an allowance taken
 * ahead, yet across stores no more than the cap are admitted, the last one before the cap is
 * admitted even while another store holds counts ahead, and what a store did not use comes back
 * to the shared count when it closes. Three stores on one schema stand for three processes.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/core/store/pg/index';
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
});
