/**
 * Reprocess pressed twice (a double click, two windows) queues the photo once: the second press,
 * meeting the first's item still on its way, answers alreadyQueued as Redo does, and the photo is
 * paid for once more, not twice (review rev19 F3). Against the reference /v1 service, on the
 * studio's real database, through a real hot folder; every charge is read from the service's own
 * ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ACTIVE_STATES } from '../../src/shared/studio';
import { onePhotoInReview } from './helpers/one-photo-in-review';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'reprocess-twice@example.com';

describe('reprocess', () => {
  it('pressed twice at once queues and pays the photo once more, not twice', async () => {
    const {
      w,
      studio,
      items,
      charges,
      spent,
      inReview: first,
      price,
    } = await onePhotoInReview(cleanups, EMAIL);

    const answers = await Promise.all([
      call(studio, 'queue.reprocess', { ids: [first.id] }),
      call(studio, 'queue.reprocess', { ids: [first.id] }),
    ]);
    // Before the fix: both { changed: 1 }, 3 charges for one photo.
    expect(answers.map((a) => a.changed).sort()).toEqual([0, 1]);
    expect(answers.map((a) => a.alreadyQueued).sort()).toEqual([0, 1]);

    const all = await until('the reprocess settled', async () => {
      const list = await items();
      return list.length >= 2 && !list.some((i) => ACTIVE_STATES.includes(i.state)) && list;
    });
    // Give a wrongly queued second job the time to be charged.
    await new Promise((r) => setTimeout(r, 1500));
    expect(charges()).toHaveLength(2);
    expect(w.service.jobs(EMAIL)).toHaveLength(2);
    expect((await items()).length).toBe(all.length);
    expect(all).toHaveLength(2);
    expect(await spent()).toBe(2 * price);
  }, 120_000);
});
