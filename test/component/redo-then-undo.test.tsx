// @vitest-environment jsdom
/**
 * After a redo, "Undo" (and U) took back the decision before it, an approval the operator did not
 * mean to touch, not the redo (review uirev C4). A redo is paid and confirmed and is not undone in
 * Review: once done, Undo is not offered for the earlier decision. A real headless studio
 * (embedded service) with two photos made and waiting for review.
 */
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { ReviewScreen } from '../../src/renderer/src/screens/ReviewScreen';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

// jsdom lays nothing out: the grid's width observer has nothing to observe.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};

it('does not offer to undo the approval before a redo once the redo is done', async () => {
  const hot = await watchedFolder(harness().root, 'hot');
  for (const [i, colour] of ['#4b7a9c', '#9c4b7a'].entries())
    await sharp({ create: { width: 320, height: 400, channels: 3, background: colour } })
      .jpeg()
      .toFile(path.join(hot, `p${i}.jpg`));
  await waitFor(async () =>
    expect((await studio().call('queue.list', {})).items.map((i) => i.state)).toEqual([
      'review',
      'review',
    ]),
  );
  const review = async (id: string) =>
    (await studio().call('results.list', {})).results.find((r) => r.id === id)?.review;
  await Promise.all([useQueue.getState().load(), useResults.getState().load()]);
  render(<ReviewScreen />);
  const button = (name: RegExp) => screen.getByRole('button', { name }) as HTMLButtonElement;
  await waitFor(() => expect(button(/^Approve A/).disabled).toBe(false));

  const approved = useResults.getState().focusedId!;
  fireEvent.click(button(/^Approve A/));
  await waitFor(async () => expect(await review(approved)).toBe('approved'));
  await waitFor(() => expect(button(/^Undo U/).disabled).toBe(false));
  const redone = useResults.getState().focusedId!;
  expect(redone).not.toBe(approved);
  fireEvent.click(button(/^Redo R/));
  const dialog = await screen.findByRole('alertdialog', { name: 'Redo 1 result?' });
  fireEvent.click(within(dialog).getByRole('button', { name: /^Redo for/ }));
  await waitFor(async () => expect(await review(redone)).toBe('rejected'));

  // Before: Undo stayed on, and took the approval back (the approved result back to pending).
  await waitFor(() => expect(button(/^Undo U/).disabled).toBe(true));
  fireEvent.click(button(/^Undo U/));
  expect(await review(approved)).toBe('approved');
});
