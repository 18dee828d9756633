// @vitest-environment jsdom
/**
 * Cancel on a photo waiting for review took one click, with no word of what it does (review uirev
 * B2): its result is already paid for, is not refunded and is then never exported. The board now
 * asks first, saying so; "Keep it for review" leaves the photo as it was. A real headless studio
 * (embedded service) with one photo made and waiting for review.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import type { ItemView } from '../../src/shared/studio';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

it('asks before cancelling a photo in review, saying its paid result is not exported', async () => {
  const hot = await watchedFolder(harness().root, 'hot');
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' } })
    .jpeg()
    .toFile(path.join(hot, 'p1.jpg'));
  const state = async () => ((await studio().call('queue.list', {})).items as ItemView[])[0]?.state;
  await waitFor(async () => expect(await state()).toBe('review'));

  render(<BatchBoard />);
  await useQueue.getState().load();
  const cancel = await screen.findByRole('button', { name: 'Cancel p1.jpg' });
  fireEvent.click(cancel);
  // Before: no dialog, and the photo was cancelled at once.
  const dialog = await screen.findByRole('alertdialog', { name: 'Cancel p1.jpg?' });
  expect(dialog.textContent).toMatch(/already made and paid for/);
  expect(dialog.textContent).toMatch(/does not refund it/);
  expect(dialog.textContent).toMatch(/not\s+exported/);
  expect(await state()).toBe('review');

  fireEvent.click(within(dialog).getByRole('button', { name: 'Keep it for review' }));
  await waitFor(() => expect(screen.queryByRole('alertdialog')).toBeNull());
  expect(await state()).toBe('review');

  fireEvent.click(screen.getByRole('button', { name: 'Cancel p1.jpg' }));
  const again = await screen.findByRole('alertdialog', { name: 'Cancel p1.jpg?' });
  fireEvent.click(within(again).getByRole('button', { name: 'Cancel the photo' }));
  await waitFor(async () => expect(await state()).toBe('cancelled'));
});
