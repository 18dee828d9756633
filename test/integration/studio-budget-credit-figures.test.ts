/**
 * What `run` says it spent when the service's own apps credit the shared balance during the batch
 * (spec §1 rule 2): the credit hides part of the charges, so the balance cannot tell what each
 * cost. The summary must never say less than the service took: the charges are counted at the
 * price the reading shows for each, rounded up, and the figure is said to be estimated. Against
 * the reference /v1 service (written from the spec alone) through `run`'s own path; money is
 * checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { priceWorlds, photoFolders, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'credit-figures@ref.test';

const { world, netSpent } = priceWorlds(cleanups, EMAIL, 400);

describe('a credit to the shared balance during the batch', () => {
  it('smaller than the charges it hides: the summary does not report less than was charged', async () => {
    // Charged 6 a photo (list 4); an app credits 2 after the 5th create: the balance moves 58.
    const w = await world({ chargeExtra: 2 });
    const [photos] = await photoFolders(w, [10]);
    const one = await runOnce(w, photos!, {
      afterCreate: { n: 5, fn: () => w.service.grant(EMAIL, 2) },
    });
    expect(one.exported).toBe(10);
    expect(netSpent(w)).toBe(60);
    // Before: 58 (nine counted 6, one 4), nothing said. Now 5.8 a photo, rounded up.
    expect(one.diamondsSpent).toBe(60);
    expect(one.diamondsUnconfirmed).toBe(one.diamondsSpent);
    expect(one.notices).toContainEqual(expect.stringContaining('estimated'));
  }, 60_000);

  it('under a ceiling: the charges count at least what they took', async () => {
    // Charged 5 a photo (list 4, within the margin); an app credits 3 after the 3rd create.
    const w = await world({ chargeExtra: 1 });
    const [photos] = await photoFolders(w, [10]);
    const one = await runOnce(w, photos!, {
      maxDiamonds: 40,
      afterCreate: { n: 3, fn: () => w.service.grant(EMAIL, 3) },
    });
    // Near the ceiling, at a price no two readings confirmed, one round of photos (4) goes before
    // a reading (WORST_RISE): that reading (17 for four, the credit in it) counts 5 each, their
    // margins kept; two more at 5 and theirs fill 40. Before that rule eight went at 4 + 1 before
    // any reading and took 40 (summary 39 before ad88f7f, then 40).
    expect(netSpent(w)).toBe(30);
    expect(one.exported).toBe(6);
    expect(one.diamondsSpent).toBe(30);
    expect(one.notices).toContainEqual(expect.stringContaining('estimated'));
  }, 60_000);
});
