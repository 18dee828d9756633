/**
 * A create whose answer was lost (charged, answer never read) on a service that keeps no
 * Idempotency-Keys, resubmitted by `run --uncertain resubmit --wait`: the resubmission is refused
 * 402 (the lost one took the balance) and the customer tops up while the run waits. The lost
 * charge, the top-up and the resubmission's charge share the balance's readings: the summary must
 * not say less than the service took. Against the reference /v1 service (written from the spec
 * alone) behind a fault proxy that loses that one answer; money is read from its own ledger.
 */
import { afterEach, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'lost-topup@ref.test';
// One photo's price (virtual_model lists and charges 4): the lost create takes all of it.
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 4);

it('a lost charge resubmitted past a 402 and a top-up is still counted in the summary', async () => {
  const w = await world({});
  const [photos] = await photoFolders(w, [1]);
  const topUp = setInterval(() => {
    if (!w.service.requests().some((r) => r.method === 'POST' && r.status === 402)) return;
    clearInterval(topUp);
    w.service.grant(EMAIL, 100);
  }, 10);
  cleanups.push(() => clearInterval(topUp));
  const summary = await runOnce(w, photos!, {
    loseFirstCreate: true,
    uncertain: 'resubmit',
    wait: {},
  });
  expect(summary.exported).toBe(1);
  // The lost create and the resubmission: both charged.
  expect(netSpent(w)).toBe(8);
  // Before: 4 (the re-read while short of diamonds became the next reading's start, past the
  // lost charge, whose photo's sending time the resubmission had cleared).
  expect(summary.diamondsSpent).toBeGreaterThanOrEqual(8);
  expect(summary.diamondsUnconfirmed).toBeGreaterThan(0);
}, 90_000);
