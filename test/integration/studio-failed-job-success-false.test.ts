/**
 * A failed (refunded) job whose poll is answered 200 {success: false, error, id, status: 'failed',
 * …} was read as a lost answer: the refunded job held as paid and still processing until
 * --give-up-after, every run, its price reported spent (review rev27 D3). A 2xx poll body that
 * reads as the job is the job's answer. Against the reference /v1 service (written from the spec
 * alone, `failedSuccessFalse`), through `run`'s own path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'failed-success-false@ref.test';

describe('a failed job polled 200 with success:false', () => {
  it('is failed and refunded at its first answer: nothing held as paid, nothing reported spent', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: {
        seed: 11,
        timeScale: 0.01,
        jobSeconds: [20, 20],
        failJobs: 1,
        failedSuccessFalse: true,
      },
    });
    // Before: held 'paid (job …); still processing' at the 30 s give-up, 1 diamond reported spent.
    const first = await runOnWorld(w, {
      giveUpAfterMs: 30_000,
      signal: AbortSignal.timeout(60_000),
    });
    expect(first.held ?? []).toEqual([]);
    expect(first.failed).toHaveLength(1);
    expect(first.exported).toBe(0);
    expect(first.diamondsSpent).toBe(0);
    // Charged once and refunded: nothing is spent.
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
    expect(w.service.balance(EMAIL)).toBe(100);
    expect(chargedTo(w.service, EMAIL)).toBe(1);
  }, 120_000);
});
