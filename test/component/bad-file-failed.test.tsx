// @vitest-environment jsdom
/**
 * A bad file (text named .jpg, a JPEG cut short) was shown as "rejected", the word for results
 * declined in review, and left out of the Failed filter and the folder card's "failed" although
 * it sits in failed/ (review uirev B7). It is now a "bad file" that says what is wrong with it and
 * that nothing was spent, counted and filtered with the failures, and under "Needs you". A real
 * headless studio (embedded service) watching a folder; its settle time is short, so the cut-short
 * copy's wait (about a minute by default: a slow copy) takes moments here.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

it('shows bad files as failures that say what is wrong, under Failed and Needs you', async () => {
  const hot = await watchedFolder(harness().root, 'hot');
  const jpeg = await sharp({
    create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' },
  })
    .jpeg()
    .toBuffer();
  fs.writeFileSync(path.join(hot, 'notes.jpg'), 'shopping list: milk, eggs\n');
  fs.writeFileSync(path.join(hot, 'cut.jpg'), jpeg.subarray(0, Math.floor(jpeg.length / 2)));
  await waitFor(async () =>
    expect((await studio().call('queue.list', {})).items.map((i) => i.state)).toEqual([
      'rejected',
      'rejected',
    ]),
  );

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  render(
    <>
      <BatchBoard />
      <FoldersScreen />
    </>,
  );
  const photos = screen.getByRole('table', { name: 'Photos' });
  const row = (name: string) => within(photos).getByText(name).closest('tr')!;
  for (const name of ['notes.jpg', 'cut.jpg']) {
    // Before: the badge said "rejected".
    expect(row(name).querySelector('.state')?.textContent).toBe('bad file');
    expect(row(name).textContent).toMatch(/Nothing was sent or spent; it was moved to failed\//);
  }
  expect(row('notes.jpg').textContent).toMatch(/Not a photo: Dropshoot takes JPEG/);
  expect(row('cut.jpg').textContent).toMatch(/The JPEG file is (incomplete|damaged)/);
  // Not something to generate again: it would be the same bad bytes.
  expect(screen.getByRole('button', { name: 'Generate again (0)…' })).toBeTruthy();

  const stateFilter = screen.getByRole('combobox', { name: 'State' });
  expect(within(stateFilter).getByRole('option', { name: 'Needs you (2)' })).toBeTruthy();
  fireEvent.change(stateFilter, { target: { value: 'failed' } });
  expect(within(photos).getAllByRole('row').slice(1)).toHaveLength(2);
  fireEvent.change(stateFilter, { target: { value: 'rejected' } });
  expect(within(photos).getAllByRole('row').slice(1)).toHaveLength(0);
  expect(screen.getByTestId('board-progress').textContent).toBe('0 of 2 finished · 2 failed');

  const card = screen.getByTestId('folder-counts').textContent ?? '';
  expect(card).toMatch(/^0\/2 finished/);
  expect(card).toMatch(/0 rejected · 2 failed/);
  expect(screen.getByTestId('folder-spent').textContent).toMatch(/ 0 spent/);
});
