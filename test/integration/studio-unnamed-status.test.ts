/**
 * A job the service charged and then answers with a final-looking status the spec does not name
 * (`expired`, `cancelled`…) and no results. The spec refunds only `failed` (3.1, 7), so the charge
 * may stand: the photo is kept as paid (its diamonds counted), held for a person with a reason
 * naming the status, and never submitted again on its own: a rerun asks the same job. The
 * reference service's completedAnsweredAs answers a completed (charged) job so.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStudioDatabase } from '../../src/studio/db/open';
import { referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** The diamonds the studio's photos show spent (what the queue and the ceilings count). */
function photosSpent(root: string): number {
  const db = openStudioDatabase(path.join(root, 'data', 'studio.db'));
  try {
    return (
      db.prepare('SELECT COALESCE(SUM(diamonds), 0) AS spent FROM items').get() as {
        spent: number;
      }
    ).spent;
  } finally {
    db.close();
  }
}

describe('a charged job answered with a final status the spec does not name', () => {
  for (const status of ['expired', 'cancelled', 'timeout'])
    it(`${status}: held as paid (never read as refunded), the next run pays nothing and collects the same job`, async () => {
      const email = `unnamed-${status}@example.com`;
      const w = await referenceWorld(cleanups, {
        email,
        diamonds: 100,
        photos: 2,
        service: {
          seed: 7,
          timeScale: 0.01,
          jobSeconds: [20, 20],
          completedAnsweredAs: { status, errorMessage: 'results no longer available' },
        },
      });
      const net = () =>
        -w.service
          .ledger(email)
          .filter((e) => e.kind === 'charge' || e.kind === 'refund')
          .reduce((sum, e) => sum + e.delta, 0);

      const first = await runOnWorld(w);
      const charged = net();
      expect(w.service.jobs(email)).toHaveLength(2);
      expect(charged).toBeGreaterThan(0);
      expect(first.exported).toBe(0);
      // Before: read as "failed, refunded": 0 diamonds shown while the service kept them.
      expect(photosSpent(w.root)).toBe(charged);
      expect(first.diamondsSpent).toBe(charged);
      expect(first.failed).toHaveLength(2);
      for (const f of first.failed)
        expect(f.reason).toMatch(
          new RegExp(
            `paid without results: .*${status}.*may have been charged.*never submitted again`,
          ),
        );

      // Before: the next run submitted both photos again (paid twice).
      w.service.setOptions({ completedAnsweredAs: undefined });
      const second = await runOnWorld(w);
      expect(w.service.jobs(email)).toHaveLength(2);
      expect(net()).toBe(charged);
      expect(second.exported).toBe(2);
      expect(photosSpent(w.root)).toBe(charged);
    }, 120_000);
});
