/**
 * A hot folder with a ceiling whose photos wait on failed jobs' refunds the balance does not show
 * yet (spec 3.1: "refunded automatically", no timing; reference service `refundLagMs`) goes on once
 * the refunds land. One reading looked for them and did not see them, and nothing asked for
 * another: in the desktop studio, where no next run comes, the photos waited for good, saying the
 * refund "has not shown in the balance yet" long after it had (review rev20 R3). Against the
 * reference /v1 service, on the studio's real database, through a real hot folder; every charge and
 * refund is read from the service's own ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FolderView, ItemView, Recipe } from '../../src/shared/studio';
import { referenceWorld, studioOnWorld } from './helpers/reference-studio';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'refund-late-folder@example.com';
const REFUND_LAG_MS = 3_000;
const CEILING = 6;

/** One photo, one job at the reference's list price of 2 diamonds. */
const TWO_DIAMONDS: Recipe = {
  request: { toolId: 'amateur_to_pro', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

describe('a hot folder held on refunds the balance does not show yet', () => {
  it('goes on once they land, never with more out at once than its ceiling', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 500,
      photos: 4,
      service: {
        seed: 7,
        timeScale: 0.01,
        jobSeconds: [20, 20],
        failJobs: 1,
        refundLagMs: REFUND_LAG_MS,
      },
    });
    // Short balance re-reads: a refund not shown is looked for again from 3 s on.
    const studio = await studioOnWorld(w, cleanups, { balanceRecheckMs: 1_000 });
    const [hot, out] = ['hot', 'out'].map((d) => path.join(w.root, d));
    for (const dir of [hot!, out!]) fs.mkdirSync(dir);
    await call(studio, 'folders.add', {
      path: hot!,
      outputDir: out!,
      recipe: TWO_DIAMONDS,
      maxDiamonds: CEILING,
    });
    const told: string[] = [];
    const items = async () => {
      const list = (await call(studio, 'queue.list', { limit: 500 })).items as ItemView[];
      for (const i of list) if (i.waitReason === 'ceiling' && i.error) told.push(i.error);
      return list;
    };
    for (const f of fs.readdirSync(w.inDir))
      fs.copyFileSync(path.join(w.inDir, f), path.join(hot!, f));

    // Every job fails: the folder ends with each photo failed (refunded), none waiting.
    // Before: the first photos' refunds were looked for once, not seen, and the others waited on
    // them until this timed out.
    await until(
      'every photo sent and failed',
      async () => {
        const list = await items();
        return list.length === 4 && list.every((i) => i.state === 'failed') && list;
      },
      45_000,
    );
    expect(told.some((t) => /has not shown in the balance yet/.test(t))).toBe(true);
    const ledger = w.service.ledger(EMAIL);
    const charges = ledger.filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(4);
    expect(new Set(charges.map((e) => e.jobId)).size).toBe(4);
    // At each charge, what was out (charged, refund not yet in the balance) stayed within the ceiling.
    for (const c of charges) {
      const at = Date.parse(c.at);
      const out = ledger
        .filter((e) => Date.parse(e.at) <= at)
        .filter(
          (e) =>
            e.kind === 'charge' || (e.kind === 'refund' && Date.parse(e.at) + REFUND_LAG_MS <= at),
        )
        .reduce((sum, e) => sum - e.delta, 0);
      expect(out, `out at ${c.at}`).toBeLessThanOrEqual(CEILING);
    }
    const folder = ((await call(studio, 'folders.list', {})) as FolderView[])[0]!;
    expect(folder.diamondsSpent).toBe(0);
  }, 90_000);
});
