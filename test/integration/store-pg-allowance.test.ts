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
import { PoolExecutor, type Executor } from '../../src/core/store/pg/executor';
import { openPgPool } from '../../src/core/store/pg/pool';
import { RequestAllowances } from '../../src/core/store/pg/request-allowance';
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

  /**
   * Admits `perTick` requests of the key every `tickMs` for `ms`; counts the ticks in which some
   * request was not answered at once (it waited for a take).
   */
  async function stream(
    store: Store,
    k: { keyId: string; cap: number },
    o: { ms: number; tickMs: number; perTick: number },
  ): Promise<{ admitted: number; refused: number; waited: number; ticks: number }> {
    const tally = { admitted: 0, refused: 0, waited: 0, ticks: 0 };
    const pending: Promise<void>[] = [];
    const end = performance.now() + o.ms;
    while (performance.now() < end) {
      tally.ticks++;
      let waited = false;
      for (let i = 0; i < o.perTick; i++) {
        let answered = false;
        const p = admitOn(store)
          .admit(k.keyId, DAY, k.cap)
          .then((r) => {
            answered = true;
            if (r.refused) tally.refused++;
            else tally.admitted++;
          });
        // Answered from the allowance: within a few microtasks, no round trip.
        for (let m = 0; m < 4; m++) await Promise.resolve();
        if (!answered) waited = true;
        pending.push(p);
      }
      if (waited) tally.waited++;
      await delay(o.tickMs);
    }
    await Promise.all(pending);
    return tally;
  }

  it('a steadily used key takes its next allowance ahead: its requests seldom wait for a take, and the count stays exact', async () => {
    const k = await key(1_000_000);
    // Warm up: the store learns the key's rate.
    await stream(stores[0]!, k, { ms: 300, tickMs: 2, perTick: 10 });
    const ms = 1_500;
    const run = await stream(stores[0]!, k, { ms, tickMs: 2, perTick: 10 });
    // Taken only on demand, every allowance's end (at most HOLD_MS = 100 ms apart) made the
    // requests then arriving wait: 15 or more ticks with a wait here. Taken ahead, only a take
    // slower than the time left (a very busy machine) makes any wait.
    expect(run.refused).toBe(0);
    expect(run.waited, JSON.stringify(run)).toBeLessThan(ms / 100 / 2);
    await stores[0]!.close();
    const total = await stores[1]!.requests.get(k.keyId, DAY);
    const warm = total - run.admitted;
    expect(warm).toBeGreaterThan(0);
    // Everything held ahead came back on close: the count is exactly what was admitted.
    expect(total).toBe(warm + run.admitted);
  });

  it('steady streams at three stores, taking ahead, admit exactly the cap and refuse every later request', async () => {
    const k = await key(3_000);
    const runs = await Promise.all(
      stores.map((s) => stream(s, k, { ms: 1_500, tickMs: 2, perTick: 4 })),
    );
    const admitted = runs.reduce((n, r) => n + r.admitted, 0);
    expect(admitted, JSON.stringify(runs)).toBe(k.cap);
    for (const r of runs) expect(r.refused).toBeGreaterThan(0);
    for (const s of stores)
      expect((await admitOn(s).admit(k.keyId, DAY, k.cap)).refused).toBe(true);
    await Promise.all(stores.map((s) => s.close()));
    const check = await openPostgresStore(databaseUrl(), { schema, max: 1 });
    try {
      expect(await check.requests.get(k.keyId, DAY)).toBe(k.cap);
    } finally {
      await check.close();
    }
  });

  it('a take ahead keeps what is left of the allowance held (at most what was held), and a give-back returns exactly the unused', async () => {
    const { keyId, cap } = await key(100);
    const handle = openPgPool(databaseUrl(), { schema, max: 1 });
    const take = async (
      holder: string,
      o: { unused?: number; keep?: number; need: number; want: number; holdMs?: number },
    ) =>
      (
        await handle.pool.query<{ granted: number; total: number; others: number }>(
          'SELECT granted, total, others FROM key_usage_take($1, $2, $3, $4, $5, $6, $7, $8, $9)',
          [keyId, DAY, holder, o.unused ?? 0, o.keep ?? 0, o.need, o.want, cap, o.holdMs ?? 5_000],
        )
      ).rows[0]!;
    const held = async (holder: string) =>
      (
        await handle.pool.query<{ held: number | null }>(
          `SELECT (holds -> $3::text ->> 'held')::integer AS held FROM key_usage WHERE key_id = $1 AND day = $2`,
          [keyId, DAY, holder],
        )
      ).rows[0]?.held ?? 0;
    try {
      // "p" admits 1 and holds 7 ahead.
      expect(await take('p', { need: 1, want: 8 })).toEqual({ granted: 8, total: 8, others: 0 });
      expect(await held('p')).toBe(7);
      // Ahead of running out (4 left, 3 used): 8 more, the 4 kept held with them.
      expect(await take('p', { keep: 4, need: 0, want: 8 })).toEqual({
        granted: 8,
        total: 16,
        others: 0,
      });
      expect(await held('p')).toBe(12);
      // Its allowance ends with 10 unused (2 more used): the count is what was admitted, 6.
      expect(await take('p', { unused: 10, need: 0, want: 0 })).toEqual({
        granted: 0,
        total: 6,
        others: 0,
      });
      expect(await held('p')).toBe(0);
      // Keeping more than it holds keeps only what it holds (the rest was never its to use).
      expect(await take('q', { need: 1, want: 3 })).toEqual({ granted: 3, total: 9, others: 0 });
      expect(await take('q', { keep: 50, need: 0, want: 0 })).toEqual({
        granted: 0,
        total: 9,
        others: 0,
      });
      expect(await held('q')).toBe(2);
      // A hold that expired and was dropped by another's take is kept as nothing: it stays
      // counted as used, never given back.
      expect(await take('r', { need: 1, want: 5, holdMs: 100 })).toEqual({
        granted: 5,
        total: 14,
        others: 2,
      });
      await delay(200);
      expect(await take('q', { unused: 2, need: 1, want: 1 })).toEqual({
        granted: 1,
        total: 13,
        others: 0,
      });
      expect(await take('r', { keep: 4, need: 0, want: 0 })).toEqual({
        granted: 0,
        total: 13,
        others: 0,
      });
      expect(await held('r')).toBe(0);
    } finally {
      await handle.pool.end();
    }
  });

  it('once a refusal at the cap is final, later calls of that key and day are refused without a statement; another day or a raised cap is asked again', async () => {
    const { keyId, cap } = await key(5);
    const handle = openPgPool(databaseUrl(), { schema, max: 2 });
    const pool = new PoolExecutor(handle);
    let statements = 0;
    const counting: Executor = {
      inTransaction: false,
      query: (sql, params) => {
        statements++;
        return pool.query(sql, params);
      },
      atomic: (fn) => pool.atomic(fn),
    };
    const allowances = new RequestAllowances(counting, `memo-${randomBytes(4).toString('hex')}`);
    try {
      for (let i = 0; i < cap; i++)
        expect((await allowances.admit(keyId, DAY, cap)).refused).toBe(false);
      expect((await allowances.admit(keyId, DAY, cap)).refused).toBe(true);
      const atFinal = statements;
      const flood = await Promise.all(
        Array.from({ length: 200 }, () => allowances.admit(keyId, DAY, cap)),
      );
      expect(flood.every((r) => r.refused)).toBe(true);
      expect(statements).toBe(atFinal);
      // Another store (process) sees the same cap reached.
      expect((await admitOn(stores[1]!).admit(keyId, DAY, cap)).refused).toBe(true);
      // The next day, and the same day with a higher cap, are counts of their own.
      expect((await allowances.admit(keyId, '2026-11-23', cap)).refused).toBe(false);
      expect((await allowances.admit(keyId, DAY, cap + 1)).refused).toBe(false);
      expect((await allowances.admit(keyId, DAY, cap + 1)).refused).toBe(true);
      expect(statements).toBeGreaterThan(atFinal);
    } finally {
      await allowances.close();
      await handle.pool.end();
    }
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
