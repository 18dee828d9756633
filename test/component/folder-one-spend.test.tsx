// @vitest-environment jsdom
/**
 * A folder card showed two spend figures that disagreed (review uirev C3): "32 diamonds spent" in
 * its counts (its photos' charges, live) and "0 spent" beside the ceiling (the folder's view, told
 * to the UI only when the folder itself changed). The card now has one figure, the batch's spend
 * the ceiling holds to, and the studio tells the UI when a charge moves it. A real headless studio
 * (embedded service) with the renderer's live events, one photo charged 1 diamond.
 */
import path from 'node:path';
import sharp from 'sharp';
import { render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { connectEvents } from '../../src/renderer/src/events';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

it('shows one spend figure on a folder card, kept live as photos are charged', async () => {
  const hot = await watchedFolder(harness().root, 'hot');
  await Promise.all([useFolders.getState().load(), useQueue.getState().load()]);
  const disconnect = connectEvents();
  try {
    render(<FoldersScreen />);
    const card = screen.getByRole('listitem', { name: 'Folder hot' });
    const ceiling = within(card).getByRole('form', { name: 'Diamond ceiling for hot' });
    expect(ceiling.textContent).toMatch(/diamonds · 0 spent/);

    await sharp({ create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' } })
      .jpeg()
      .toFile(path.join(hot, 'p1.jpg'));
    await waitFor(async () =>
      expect((await studio().call('queue.list', {})).items[0]?.state).toBe('review'),
    );
    // Before: the counts said "1 diamonds spent" while the ceiling's line stayed "0 spent".
    await waitFor(() => expect(ceiling.textContent).toMatch(/diamonds · 1 spent/));
    expect(card.textContent?.match(/\d+ (diamonds )?spent/g)).toEqual(['1 spent']);
  } finally {
    disconnect();
  }
});
