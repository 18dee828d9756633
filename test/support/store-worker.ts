/**
 * A child process with its own PostgreSQL pool, for the cross-process tests: started with
 * `fork(..., { execArgv: ['--import', 'tsx'] })` and one JSON argument `{ url, schema, name }`,
 * it opens the store (migrating, like any `serve` starting), says `{ ready }`, then answers
 * requests `{ id, op, ... }` with `{ id, ok, result | error }`.
 *
 * The operations do what the service does with the Store (the rules are the service's; the
 * exactness across processes is the store's): charge = lock the balance, check, append; count =
 * the atomic capped increment (admit: the service's countRequest); refund = finish the job and refund in the transaction that
 * finished it; idempotent charge = charge and remember the answer in one transaction.
 */
import { z } from 'zod';
import { DailyCapReached } from '../../src/core/errors';
import { countRequest } from '../../src/core/request-counter';
import { openPostgresStore } from '../../src/core/store/pg/index';
import type { Store } from '../../src/core/store/types';

export const workerRequest = z.discriminatedUnion('op', [
  z.object({
    id: z.number(),
    op: z.literal('charge'),
    accountId: z.string(),
    jobId: z.string(),
    price: z.number().int().positive(),
    at: z.string(),
  }),
  z.object({
    id: z.number(),
    op: z.literal('increment'),
    keyId: z.string(),
    day: z.string(),
    cap: z.number().int().positive(),
  }),
  z.object({
    id: z.number(),
    op: z.literal('admit'),
    keyId: z.string(),
    accountId: z.string(),
    cap: z.number().int().positive(),
    at: z.string(),
    n: z.number().int().positive(),
  }),
  z.object({ id: z.number(), op: z.literal('refund'), jobId: z.string(), at: z.string() }),
  z.object({ id: z.number(), op: z.literal('refundUnguarded'), jobId: z.string(), at: z.string() }),
  z.object({
    id: z.number(),
    op: z.literal('chargeAndHang'),
    accountId: z.string(),
    jobId: z.string(),
    price: z.number().int().positive(),
    at: z.string(),
  }),
  z.object({
    id: z.number(),
    op: z.literal('claim'),
    workerId: z.string(),
    leaseMs: z.number().int().positive(),
    limit: z.number().int().positive(),
  }),
  z.object({
    id: z.number(),
    op: z.literal('renew'),
    workerId: z.string(),
    leaseMs: z.number().int().positive(),
  }),
  z.object({
    id: z.number(),
    op: z.literal('markStarted'),
    jobId: z.string(),
    idx: z.number().int(),
    at: z.string(),
  }),
  z.object({
    id: z.number(),
    op: z.literal('completeUnit'),
    jobId: z.string(),
    idx: z.number().int(),
    blobIds: z.array(z.string()),
    leaseOwner: z.string(),
  }),
  z.object({ id: z.number(), op: z.literal('finish'), jobId: z.string(), at: z.string() }),
  z.object({
    id: z.number(),
    op: z.literal('idempotentCharge'),
    accountId: z.string(),
    jobId: z.string(),
    price: z.number().int().positive(),
    key: z.string(),
    bodyHash: z.string(),
    at: z.string(),
  }),
]);
export type WorkerRequest = z.infer<typeof workerRequest>;
export type WorkerReply =
  { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

const config = z
  .object({ url: z.string(), schema: z.string(), name: z.string() })
  .parse(JSON.parse(process.argv[2] ?? '{}'));

class Replay extends Error {}

/** Refunds the job's charge unless it has none or is refunded already; the caller's transaction. */
async function refundOnce(tx: Store, jobId: string, at: string): Promise<{ refunded: number }> {
  const charge = await tx.ledger.chargeOf(jobId);
  if (!charge || (await tx.ledger.hasRefund(jobId))) return { refunded: 0 };
  await tx.ledger.append({
    accountId: charge.accountId,
    kind: 'refund',
    amount: -charge.amount,
    jobId,
    note: config.name,
    createdAt: at,
  });
  return { refunded: -charge.amount };
}

async function handle(store: Store, req: WorkerRequest): Promise<unknown> {
  switch (req.op) {
    case 'charge':
      return store.transaction(async (tx) => {
        const balance = await tx.ledger.balanceOf(req.accountId, { forUpdate: true });
        if (balance === undefined || balance < req.price) return { charged: false, balance };
        const after = await tx.ledger.append({
          accountId: req.accountId,
          kind: 'charge',
          amount: -req.price,
          jobId: req.jobId,
          note: config.name,
          createdAt: req.at,
        });
        return { charged: true, balance: after };
      });
    case 'increment':
      return store.requests.increment(req.keyId, req.day, req.cap);
    case 'admit': {
      // n requests at once, counted as the service counts them (allowances taken ahead).
      const key = { keyId: req.keyId, accountId: req.accountId, dailyCap: req.cap };
      const results = await Promise.all(
        Array.from({ length: req.n }, () =>
          countRequest(store, key, new Date(req.at)).then(
            () => true,
            (err: unknown) => {
              if (err instanceof DailyCapReached) return false;
              throw err;
            },
          ),
        ),
      );
      return {
        admitted: results.filter(Boolean).length,
        refused: results.filter((r) => !r).length,
      };
    }
    case 'refund':
      // The service's rule: only the call that moved the job out of 'processing' refunds it.
      return store.transaction(async (tx) => {
        if (!(await tx.jobs.finish(req.jobId, 'failed', 'provider failed', req.at)))
          return { refunded: 0 };
        return refundOnce(tx, req.jobId, req.at);
      });
    case 'refundUnguarded':
      // No job-state gate: only the store's one-refund-per-job constraint stands between racers.
      return store.transaction((tx) => refundOnce(tx, req.jobId, req.at));
    case 'chargeAndHang':
      // Charges inside a transaction that never ends: the account row stays locked until this
      // process dies (the test kills it with SIGKILL), and the charge must then vanish.
      return store.transaction(async (tx) => {
        await tx.ledger.balanceOf(req.accountId, { forUpdate: true });
        await tx.ledger.append({
          accountId: req.accountId,
          kind: 'charge',
          amount: -req.price,
          jobId: req.jobId,
          note: config.name,
          createdAt: req.at,
        });
        process.send?.({ id: req.id, ok: true, result: 'holding' } satisfies WorkerReply);
        return new Promise<never>(() => undefined);
      });
    case 'claim':
      return store.jobs.claim(req.workerId, req.leaseMs, req.limit);
    case 'renew':
      return store.jobs.renewLease(req.workerId, req.leaseMs);
    case 'markStarted':
      return store.jobs.markUnitStarted(req.jobId, req.idx, req.at);
    case 'completeUnit':
      return store.jobs.completeUnit(req.jobId, req.idx, req.blobIds, req.leaseOwner);
    case 'finish':
      return store.jobs.finish(req.jobId, 'completed', null, req.at);
    case 'idempotentCharge':
      try {
        return await store.transaction(async (tx) => {
          const seen = await tx.idempotency.get(req.accountId, 'generations', req.key);
          if (seen) throw new Replay();
          const balance = await tx.ledger.balanceOf(req.accountId, { forUpdate: true });
          if (balance === undefined || balance < req.price) return { charged: false, jobId: null };
          await tx.ledger.append({
            accountId: req.accountId,
            kind: 'charge',
            amount: -req.price,
            jobId: req.jobId,
            note: config.name,
            createdAt: req.at,
          });
          const body = { success: true, id: req.jobId };
          const stored = await tx.idempotency.put(
            {
              accountId: req.accountId,
              endpoint: 'generations',
              key: req.key,
              bodyHash: req.bodyHash,
              status: 202,
              body,
              createdAt: req.at,
            },
            new Date(Date.parse(req.at) - 24 * 3600_000).toISOString(),
          );
          if (!stored) throw new Replay(); // another process answered first: undo this charge
          return { charged: true, jobId: req.jobId };
        });
      } catch (err) {
        if (!(err instanceof Replay)) throw err;
        const first = await store.idempotency.get(req.accountId, 'generations', req.key);
        return { charged: false, jobId: (first?.body as { id?: string } | undefined)?.id ?? null };
      }
  }
}

const store = await openPostgresStore(config.url, {
  schema: config.schema,
  max: 8,
  applicationName: config.name,
});
process.on('message', (message: unknown) => {
  const parsed = workerRequest.safeParse(message);
  if (!parsed.success) {
    process.send?.({
      id: (message as { id?: number })?.id ?? -1,
      ok: false,
      error: `bad request: ${parsed.error.message}`,
    } satisfies WorkerReply);
    return;
  }
  handle(store, parsed.data).then(
    (result) => process.send?.({ id: parsed.data.id, ok: true, result } satisfies WorkerReply),
    (err: unknown) =>
      process.send?.({
        id: parsed.data.id,
        ok: false,
        error: err instanceof Error ? err.message : String(err),
      } satisfies WorkerReply),
  );
});
process.on('disconnect', () => {
  void store.close().finally(() => process.exit(0));
});
process.send?.({ ready: process.pid });
