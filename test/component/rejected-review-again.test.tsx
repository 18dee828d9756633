// @vitest-environment jsdom
/**
 * A photo whose results were all declined had no action on its board row (review uirev30
 * walkthrough): "Every result was declined in review; nothing exported", and nothing to press; a
 * reject by mistake was undone only by finding the Review screen's "rejected" filter. The row now
 * offers "Review again", which opens Review on its declined result, where approving it exports
 * it (nothing charged). A real headless studio (embedded service).
 */
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { ReviewScreen } from '../../src/renderer/src/screens/ReviewScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { useUi } from '../../src/renderer/src/stores/ui-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

// jsdom lays nothing out: the review grid's width observer has nothing to observe.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};

it('leads a rejected photo back to Review, where approving it exports it', async () => {
  const hot = await watchedFolder(harness().root, 'hot');
  for (const [i, colour] of ['#4b7a9c', '#9c4b7a'].entries())
    await sharp({ create: { width: 320, height: 400, channels: 3, background: colour } })
      .jpeg()
      .toFile(path.join(hot, `p${i + 1}.jpg`));
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(async () =>
    expect((await items()).map((i) => i.state)).toEqual(['review', 'review']),
  );
  const p2 = (await items()).find((i) => i.name === 'p2.jpg')!;
  const declined = (await studio().call('results.list', {})).results.find(
    (r) => r.itemId === p2.id,
  )!;
  await studio().call('review.set', { ids: [declined.id], review: 'rejected' });
  await waitFor(async () =>
    expect((await items()).find((i) => i.id === p2.id)?.state).toBe('rejected'),
  );

  await Promise.all([
    useQueue.getState().load(),
    useFolders.getState().load(),
    useResults.getState().load(),
  ]);
  const board = render(<BatchBoard />);
  const row = within(screen.getByRole('table', { name: 'Photos' }))
    .getByText('p2.jpg')
    .closest('tr')!;
  expect(row.textContent).toMatch(/Every result was declined in review/);
  // Before: no button on the row.
  fireEvent.click(within(row).getByRole('button', { name: 'Review again p2.jpg' }));
  expect(useUi.getState().screen).toBe('review');
  expect(useResults.getState().filter).toBe('rejected');
  expect(useResults.getState().focusedId).toBe(declined.id);
  board.unmount();

  render(<ReviewScreen />);
  const approve = screen.getByRole('button', { name: /^Approve A/ }) as HTMLButtonElement;
  await waitFor(() => expect(approve.disabled).toBe(false));
  fireEvent.click(approve);
  await waitFor(async () =>
    expect((await items()).find((i) => i.id === p2.id)?.state).toBe('exported'),
  );
  expect((await studio().call('queue.list', {})).items).toHaveLength(2);
});
