/**
 * A hot folder taken away while its photos wait (a network share that drops, a folder moved by
 * mistake) and put back: the photos that failed as missing meanwhile are taken again, as the
 * same rows, as new drops would be: with the folder's current recipe, and not at all when the
 * same photo with that recipe was made meanwhile (review uirev B6: they stayed failed although
 * their files were back; rev26: sent again as they were, they were paid twice or with the old
 * recipe). Against the reference /v1 service, through real hot folders; charges from its ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FolderView, ItemView } from '../../src/shared/studio';
import { hotFolderWorld, withModel } from './helpers/hot-folder-world';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

type World = Awaited<ReturnType<typeof hotFolderWorld>>;

/**
 * Drops p0 and p1 while the queue is paused, takes the folder away, lets the queue go until both
 * fail as missing, runs `meanwhile`, then puts the folder back. Returns the failed rows and what
 * the UI was told of the folder.
 */
async function awayAndBack(world: World, meanwhile: () => Promise<void> = async () => {}) {
  const { studio, hot, folder, items, drop } = world;
  const told: boolean[] = [];
  studio.engine.events.on('folder.changed', (view) => {
    if (view.id === folder.id) told.push(view.missing);
  });
  await call(studio, 'queue.pause', { paused: true });
  drop(['p0.jpg'], ['p1.jpg']);
  await until('both photos queued', async () => (await items()).length === 2);
  const away = `${hot}-away`;
  fs.renameSync(hot, away);
  await call(studio, 'queue.pause', { paused: false });
  const failed = await until('both photos failed as missing', async () => {
    const all = await items();
    return all.every((i) => i.state === 'failed') && all;
  });
  expect(failed.map((i) => i.error).join(' ')).toMatch(/ENOENT|missing/);
  await until('the UI told the folder is gone', () => Promise.resolve(told.includes(true)));
  await meanwhile();
  fs.renameSync(away, hot);
  return { failed, told };
}

const inFolder = (all: ItemView[], folderId: string) => all.filter((i) => i.folderId === folderId);

it('photos failed while their hot folder was away are made once it is back, as the same rows', async () => {
  const world = await hotFolderWorld(
    cleanups,
    'folder-back@example.com',
    withModel('person-001'),
    2,
  );
  const { studio, folder, items, charges } = world;
  const listed = async () =>
    ((await call(studio, 'folders.list', {})) as FolderView[]).find((f) => f.id === folder.id)!;
  const { failed, told } = await awayAndBack(world, async () =>
    expect((await listed()).missing).toBe(true),
  );
  // Before the fix: both stayed failed, nothing charged.
  const made = await until(
    'both photos made',
    async () => {
      const all = await items();
      return all.length === 2 && all.every((i) => i.state === 'review') && all;
    },
    30_000,
  );
  expect(made.map((i) => i.id).sort()).toEqual(failed.map((i) => i.id).sort());
  expect(charges()).toHaveLength(2);
  expect((await listed()).missing).toBe(false);
  await until('the UI told the folder is back', () => Promise.resolve(told.at(-1) === false));
}, 120_000);

it('they take the recipe the folder was given while it was away', async () => {
  const world = await hotFolderWorld(
    cleanups,
    'folder-back-recipe@example.com',
    withModel('person-001'),
    2,
  );
  const { studio, folder, items, charges } = world;
  await awayAndBack(world, async () => {
    await call(studio, 'folders.setRecipe', { id: folder.id, recipe: withModel('person-002') });
  });
  const made = await until(
    'both photos made',
    async () => {
      const all = await items();
      return all.every((i) => i.state === 'review') && all;
    },
    30_000,
  );
  // Before: made with person-001, the recipe they were queued with.
  expect(
    made.map((i) => (i.recipe.request as { images: Record<string, string> }).images.fashion_model),
  ).toEqual(['person-002', 'person-002']);
  expect(charges()).toHaveLength(2);
}, 120_000);

it('they are not paid again when copies were made in another folder meanwhile', async () => {
  const world = await hotFolderWorld(
    cleanups,
    'folder-back-copies@example.com',
    withModel('person-001'),
    2,
  );
  const { studio, folder, items, charges, w } = world;
  const other = path.join(w.root, 'other');
  fs.mkdirSync(other);
  const second = await call(studio, 'folders.add', {
    path: other,
    outputDir: path.join(w.root, 'other-out'),
    recipe: withModel('person-001'),
  });
  await awayAndBack(world, async () => {
    for (const name of ['p0.jpg', 'p1.jpg'])
      fs.copyFileSync(path.join(w.inDir, name), path.join(other, name));
    await until(
      'the copies made',
      async () => {
        const copies = inFolder(await items(), second.id);
        return copies.length === 2 && copies.every((i) => i.state === 'review');
      },
      30_000,
    );
  });
  const back = await until(
    'the first folder’s photos settled',
    async () => {
      const rows = inFolder(await items(), folder.id);
      return rows.every((i) => i.state === 'skipped') && rows;
    },
    30_000,
  );
  // Before: both sent again, 4 charges for 2 photos.
  expect(back.map((i) => i.note).join(' ')).toMatch(/same photo and recipe already generated/);
  expect(charges()).toHaveLength(2);
}, 120_000);
