// @vitest-environment jsdom
/**
 * A folder nothing was dropped into yet said "0/0 finished · 0 working · … · ETA done" on its card
 * (review uirev30 walkthrough): done, of a batch not begun. It now says there are no photos yet
 * and where to drop them; the counts come with the first photo. A real headless studio
 * (embedded service) watching the folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

it('says an empty folder has no photos yet, not that it is done', async () => {
  const hot = await watchedFolder(harness().root, 'empty');
  await Promise.all([useFolders.getState().load(), useQueue.getState().load()]);
  const { unmount } = render(<FoldersScreen />);
  const card = screen.getByRole('listitem', { name: 'Folder empty' });
  // Before: "0/0 finished · 0 working · 0 to review · 0 exported · 0 rejected · 0 failed · ETA done".
  expect(within(card).queryByText(/ETA done/)).toBeNull();
  expect(within(card).getByTestId('folder-empty').textContent).toBe(
    `No photos yet: drop product photos into ${hot}. Each is taken once its copy is complete.`,
  );
  unmount();

  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' } })
    .jpeg()
    .toFile(path.join(hot, 'p1.jpg'));
  await waitFor(async () => expect((await studio().call('queue.list', {})).items).toHaveLength(1));
  await useQueue.getState().load();
  render(<FoldersScreen />);
  expect(screen.queryByTestId('folder-empty')).toBeNull();
  expect(screen.getByTestId('folder-counts').textContent).toMatch(/^0\/1 finished/);
});

it('says only that a missing folder is missing, and how to get it back', async () => {
  const hot = await watchedFolder(harness().root, 'away');
  fs.renameSync(hot, `${hot}-moved`);
  await waitFor(async () =>
    expect((await studio().call('folders.list', {})).find((f) => f.path === hot)?.missing).toBe(
      true,
    ),
  );
  await Promise.all([useFolders.getState().load(), useQueue.getState().load()]);
  render(<FoldersScreen />);
  const card = screen.getByRole('listitem', { name: 'Folder away' });
  // Before: "No photos yet: drop product photos into <path>" beside "Folder not found".
  expect(within(card).queryByTestId('folder-empty')).toBeNull();
  expect(within(card).getByTestId('folder-missing').textContent).toBe(
    `Folder not found: ${hot} was moved or deleted, or its network share is not connected. Put it back there (or reconnect the share) and it is watched again, or press “Stop watching”.`,
  );
});
