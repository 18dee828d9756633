// @vitest-environment jsdom
/**
 * Progress that tells what is finished and what holds the rest (review uirev B3, B4). Photos held
 * by the folder's diamond ceiling counted as "working" with an ETA of "about 3 min", and "N of N
 * through · done" counted photos waiting for review (and failed ones). Now only exported or
 * declined photos count as finished, the photos in review are said to be, and held photos are
 * named with what holds them, not folded into a time. A real headless studio (embedded service):
 * a folder whose ceiling pays for one photo of three.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import type { ItemView } from '../../src/shared/studio';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

it('counts only finished photos, and says the ceiling holds the rest', async () => {
  const hot = await watchedFolder(harness().root, 'ceiling', { maxDiamonds: 1 });
  for (const [i, colour] of ['#4b7a9c', '#9c4b7a', '#7a9c4b'].entries())
    await sharp({ create: { width: 320, height: 400, channels: 3, background: colour } })
      .jpeg()
      .toFile(path.join(hot, `p${i}.jpg`));
  const items = async () => (await studio().call('queue.list', {})).items as ItemView[];
  await waitFor(async () => {
    const all = await items();
    expect(all.map((i) => i.state).sort()).toEqual(['queued', 'queued', 'review']);
    expect(all.filter((i) => i.waitReason === 'ceiling')).toHaveLength(2);
  });

  await useFolders.getState().load();
  await useQueue.getState().load();
  render(<FoldersScreen />);
  const counts = await screen.findByTestId('folder-counts');
  // Before: "1/3 through · 2 working · … ETA about N min" (or "under a minute"); then "0/3
  // finished · 2 working": held photos are not working, they are counted apart.
  expect(counts.textContent).toMatch(/^0\/3 finished · 0 working · 2 held · 1 to review/);
  expect(counts.textContent).toMatch(/ETA 2 held: at the diamond ceiling/);
  expect(screen.getByTestId('folder-held').textContent).toBe(
    '2 held: at the diamond ceiling (raise it to go on)',
  );
});

it('says "done" only when every photo is finished, not while some wait for review', async () => {
  render(<BatchBoard />);
  await useQueue.getState().load();
  // The photo in review and the two held ones of the test before, on the same studio.
  await waitFor(() => expect(screen.getByTestId('board-progress').textContent).toBeTruthy());
  expect(screen.getByTestId('board-progress').textContent).toBe('0 of 3 finished · 1 to review');
  await studio().call('folders.setCeiling', {
    id: (await studio().call('folders.list', {}))[0]!.id,
    maxDiamonds: null,
  });
  // The board follows the studio's events in the app; here it reads the queue again.
  await waitFor(
    async () => {
      await useQueue.getState().load();
      expect(screen.getByTestId('board-progress').textContent).toBe(
        '0 of 3 finished · 3 to review',
      );
    },
    { timeout: 30_000 },
  );
  const eta = within(screen.getByRole('group', { name: 'Budget' })).getByText(
    'ETA',
  ).nextElementSibling;
  expect(eta?.textContent).toBe('made; 3 to review');
});
