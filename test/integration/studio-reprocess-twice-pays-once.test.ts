/**
 * Reprocess pressed twice (a double click, two windows) queues the photo once: the second press,
 * meeting the first's item still on its way, answers alreadyQueued as Redo does, and the photo is
 * paid for once more, not twice (review rev19 F3). Against the reference /v1 service, on the
 * studio's real database, through a real hot folder; every charge is read from the service's own
 * ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ACTIVE_STATES, type FolderView, type ItemView } from '../../src/shared/studio';
import { referenceWorld, studioOnWorld } from './helpers/reference-studio';
import { CUTOUT_RECIPE } from './helpers/studio-fixtures';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'reprocess-twice@example.com';

describe('reprocess', () => {
  it('pressed twice at once queues and pays the photo once more, not twice', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 500,
      service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 20], failShots: 0 },
    });
    const studio = await studioOnWorld(w, cleanups);
    const hot = path.join(w.root, 'hot');
    fs.mkdirSync(hot);
    const folder = await call(studio, 'folders.add', {
      path: hot,
      outputDir: path.join(w.root, 'out'),
      recipe: CUTOUT_RECIPE,
    });
    const items = async () =>
      (await call(studio, 'queue.list', { limit: 500 })).items as ItemView[];
    const charges = () => w.service.ledger(EMAIL).filter((e) => e.kind === 'charge');
    const spent = async () =>
      ((await call(studio, 'folders.list', {})) as FolderView[]).find((f) => f.id === folder.id)!
        .diamondsSpent;

    fs.copyFileSync(path.join(w.inDir, 'p0.jpg'), path.join(hot, 'p0.jpg'));
    const [first] = await until('the photo generated, in review', async () => {
      const all = await items();
      return all.length === 1 && all[0]!.state === 'review' && all;
    });
    expect(charges()).toHaveLength(1);
    const price = -charges()[0]!.delta;

    const answers = await Promise.all([
      call(studio, 'queue.reprocess', { ids: [first!.id] }),
      call(studio, 'queue.reprocess', { ids: [first!.id] }),
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
