/**
 * A service that answers creates late (7 s here, with the client's request timeout at 5 s; 90 s
 * against the default 60 s in review rev17 S1) and keeps no Idempotency-Key: a create given up on
 * was charged all the same, and its job id was only in the answer not waited for, so the paid
 * results could never be collected. Writes are waited for longer than reads. Against the
 * reference /v1 service; money from its ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectEveryPhotoPaidOnce, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'slow-create@ref.test';

describe('creates answered later than the request timeout', () => {
  it('are waited for: every photo paid once and delivered', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      photos: 2,
      service: {
        seed: 13,
        timeScale: 0.01,
        jobSeconds: [5, 10],
        honourIdempotencyKey: false,
        createDelayMs: 7_000,
      },
    });
    const run = await runOnWorld(w);
    expectEveryPhotoPaidOnce(run, w.service, EMAIL, 2);
  }, 120_000);
});
