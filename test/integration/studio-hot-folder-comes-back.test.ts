/**
 * A hot folder taken away while its photos wait (a network share that drops, a folder moved by
 * mistake) and put back: the photos that failed as missing meanwhile are taken again, as the
 * same rows, and paid once (review uirev B6: they stayed failed although their files were back).
 * Against the reference /v1 service, through a real hot folder; charges from the service's ledger.
 */
import fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import type { FolderView } from '../../src/shared/studio';
import { hotFolderWorld, withModel } from './helpers/hot-folder-world';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it('photos failed while their hot folder was away are made once it is back, as the same rows', async () => {
  const { studio, hot, folder, items, charges, drop } = await hotFolderWorld(
    cleanups,
    'folder-back@example.com',
    withModel('person-001'),
    2,
  );
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
  const listed = async () =>
    ((await call(studio, 'folders.list', {})) as FolderView[]).find((f) => f.id === folder.id)!;
  expect((await listed()).missing).toBe(true);

  fs.renameSync(away, hot);
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
}, 120_000);
