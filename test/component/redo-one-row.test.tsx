// @vitest-environment jsdom
/**
 * After a redo the photo appeared twice (review uirev C4): the earlier item stayed a row of its own
 * ("Every result was declined in review; nothing exported") and the counts grew (7 photos for 6
 * dropped). One photo is one row: the redo's item, with the earlier attempt behind a disclosure;
 * the folder card counts one photo, and both charges stay spent. A real headless studio (embedded
 * service), one photo made, redone from review, made again.
 */
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

it('shows a redone photo as one row, its earlier attempt as its history', async () => {
  const hot = await watchedFolder(harness().root, 'hot');
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' } })
    .jpeg()
    .toFile(path.join(hot, 'p1.jpg'));
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(async () => expect((await items())[0]?.state).toBe('review'));
  const { results } = await studio().call('results.list', {});
  await studio().call('review.redo', { resultIds: results.map((r) => r.id) });
  await waitFor(async () =>
    expect((await items()).map((i) => i.state).sort()).toEqual(['rejected', 'review']),
  );

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  render(
    <>
      <BatchBoard />
      <FoldersScreen />
    </>,
  );
  const photos = screen.getByRole('table', { name: 'Photos' });
  // Before: two rows, p1.jpg 'rejected' and p1.jpg 'review'.
  const rows = within(photos).getAllByRole('row').slice(1);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.getAttribute('data-state')).toBe('review');
  const history = within(rows[0]!).getByTestId('earlier-attempts');
  expect(history.textContent).toMatch(/Replaces an earlier attempt/);
  expect(history.textContent).toMatch(/rejected · 1 diamond spent/);
  expect(screen.getByTestId('board-progress').textContent).toMatch(
    /^0 of 1 finished · 1 to review/,
  );
  // Both jobs were paid: the spend counts both.
  const budget = screen.getByRole('group', { name: 'Budget' });
  const spent = within(budget).getByText('Spent').nextElementSibling;
  expect(spent?.textContent).toBe('2');
  const card = screen.getByTestId('folder-counts').textContent ?? '';
  expect(card).toMatch(/^0\/1 finished/);
  expect(card).toMatch(/1 to review · 0 exported · 0 rejected/);
  expect(screen.getByTestId('folder-spent').textContent).toMatch(/ 2 spent/);
});
