/**
 * A catalog job whose counters say every shot is done (packCompleted + packFailed >= packTotal, the
 * completed shots listed) while its status word stays `pack_processing` (spec 3.2: the final
 * status of a catalog job is not shown) was read as running by its word: polled until the
 * give-up, every run, the paid shots never collected (review rev27 D5). Against the reference /v1
 * service (written from the spec alone, `catalogStatus: 'pack-stays'`), through `run`'s own path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import { referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'catalog-counters-done@example.com';

/** A ready shoot of the reference set shoot-02 (3 shots). */
const READY_SHOOT: Recipe = {
  request: { readyTemplateSetId: 'shoot-02', images: { garment_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{shot}-{n}' },
};

describe('a catalog job done by its counters under an in-progress word', () => {
  it('is collected in a few polls, charged once; the next run spends nothing', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 200,
      service: {
        seed: 7,
        timeScale: 0.01,
        jobSeconds: [20, 20],
        failShots: 0,
        catalogStatus: 'pack-stays',
      },
    });
    // Before: held 'paid …; still processing' at the 20 s stop, 0 exported, polled on and on.
    const first = await runOnWorld(w, { recipe: READY_SHOOT, signal: AbortSignal.timeout(20_000) });
    expect(first.interrupted).toBeUndefined();
    expect(first.held ?? []).toEqual([]);
    expect(first.exported).toBe(1);
    expect(first.files).toHaveLength(3);
    const polls = w.service
      .requests()
      .filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/')).length;
    expect(polls).toBeLessThanOrEqual(4);
    const again = await runOnWorld(w, { recipe: READY_SHOOT, signal: AbortSignal.timeout(20_000) });
    expect(again.diamondsSpent).toBe(0);
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
  }, 90_000);
});
