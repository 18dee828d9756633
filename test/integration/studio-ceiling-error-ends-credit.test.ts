/**
 * Jobs the service ends under a word the spec does not name (`error`) keep their charge, while a
 * credit lands on the account (the service's own apps share the balance, spec 1): the drop the
 * balance shows is smaller than the charges. Read as those jobs' refunds, it let the batch spend
 * past its ceiling and reported less than the service took (review rev18 E1: 28 charged under
 * --max-diamonds 24). The ceiling holds on the service's ledger, and diamondsSpent is never
 * below what it charged. Against the reference /v1 service; money from its ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'error-ends-credit@ref.test';

describe("jobs ended as 'error' that keep their charge, and a credit meanwhile", () => {
  it('the ceiling holds on the ledger and the spend reported is never below it', async () => {
    const ceiling = 4;
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      photos: 8,
      service: {
        seed: 17,
        timeScale: 0.01,
        jobSeconds: [5, 10],
        completedAnsweredAs: { status: 'error', errorMessage: 'worker crashed' },
        creditOnFirstPoll: 2,
      },
    });
    let before = 0;
    for (const run of [1, 2]) {
      const summary = await runOnWorld(w, {
        maxDiamonds: ceiling,
        engine: { balanceRecheckMs: 1_000 },
      });
      const charged = chargedTo(w.service, EMAIL) - before;
      expect(charged, `run ${run}`).toBeLessThanOrEqual(ceiling);
      expect(summary.diamondsSpent ?? 0, `run ${run}`).toBeGreaterThanOrEqual(charged);
      before += charged;
    }
    // Each 'error' job is held as paid: never sent again.
    const jobs = w.service.jobs(EMAIL);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
    expect(chargedTo(w.service, EMAIL)).toBe(jobs.length);
  }, 120_000);
});
