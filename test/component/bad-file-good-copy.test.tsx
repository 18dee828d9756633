// @vitest-environment jsdom
/**
 * A bad file's row asks for a good copy in the folder; dropped under the same name, the copy was
 * counted as a second photo and the failure stayed for good ("0 of 2 finished · 1 failed", Needs
 * you (1): review rev29 D3). The copy is the photo; the bad file its earlier attempt. A real
 * headless studio (embedded service) watching a folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

it('a good copy dropped in place of a bad file is the photo: one row, the bad file its history', async () => {
  const hot = await watchedFolder(harness().root, 'hot');
  fs.writeFileSync(path.join(hot, 'shirt.jpg'), 'shopping list: milk, eggs\n');
  await waitFor(async () =>
    expect((await studio().call('queue.list', {})).items.map((i) => i.state)).toEqual(['rejected']),
  );
  // Moved to failed/, as its row says; then the good copy, under the same name.
  await waitFor(() => expect(fs.existsSync(path.join(hot, 'shirt.jpg'))).toBe(false));
  const jpeg = await sharp({
    create: { width: 640, height: 800, channels: 3, background: '#4b7a9c' },
  })
    .jpeg()
    .toBuffer();
  fs.writeFileSync(path.join(hot, 'shirt.jpg'), jpeg);
  await waitFor(
    async () => {
      const items = (await studio().call('queue.list', {})).items;
      expect(items.find((i) => !i.badFile)?.state).toBe('review');
    },
    { timeout: 30_000 },
  );

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  render(
    <>
      <BatchBoard />
      <FoldersScreen />
    </>,
  );
  // Before: two rows, "0 of 2 finished · 1 to review · 1 failed", Needs you (1), for good.
  const photos = screen.getByRole('table', { name: 'Photos' });
  expect(within(photos).getAllByRole('row').slice(1)).toHaveLength(1);
  expect(screen.getByTestId('board-progress').textContent).toBe('0 of 1 finished · 1 to review');
  expect(within(photos).getByTestId('earlier-attempts').textContent).toMatch(
    /Replaces an earlier attempt/,
  );
  const stateFilter = screen.getByRole('combobox', { name: 'State' });
  expect(within(stateFilter).queryByRole('option', { name: /Needs you \(1\)/ })).toBeNull();
  expect(screen.getByTestId('folder-counts').textContent).toMatch(/^0\/1 finished.* 0 failed/);
});
