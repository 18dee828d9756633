/**
 * A photo generated (paid) and cancelled while waiting in review is not generated and paid again
 * when the same photo is dropped again (another name, same bytes): its paid job counts as a
 * rejected one does, and the re-drop is skipped (review rev19 F1). Against the reference /v1
 * service, on the studio's real database, through a real hot folder; every charge is read from
 * the service's own ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ACTIVE_STATES } from '../../src/shared/studio';
import { onePhotoInReview } from './helpers/one-photo-in-review';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'cancel-review@example.com';

describe('cancel in review', () => {
  it('a paid photo cancelled in review and dropped again under another name is not paid again', async () => {
    const { w, studio, hot, items, charges, spent, inReview, price } = await onePhotoInReview(
      cleanups,
      EMAIL,
    );
    expect(await call(studio, 'queue.cancel', { ids: [inReview.id] })).toEqual({ changed: 1 });

    // The same bytes dropped again under another name.
    fs.copyFileSync(path.join(w.inDir, 'p0.jpg'), path.join(hot, 'again-p0.jpg'));
    const all = await until('the second drop settled', async () => {
      const list = await items();
      return list.length === 2 && !list.some((i) => ACTIVE_STATES.includes(i.state)) && list;
    });
    // Give a wrongly queued photo the time to be charged.
    await new Promise((r) => setTimeout(r, 1500));
    const again = all.find((i) => i.name === 'again-p0.jpg')!;
    // Before the fix: queued and paid again (2 charges for one photo, folder spent 2 x price).
    expect(charges()).toHaveLength(1);
    expect(again.state).toBe('skipped');
    expect(again.note).toContain('cancelled');
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
    expect(await spent()).toBe(price);
  }, 120_000);
});
