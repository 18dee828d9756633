// @vitest-environment jsdom
/**
 * A photo held for diamonds after the service refused its create 402 sits at "submitting" with
 * nothing paid: the board offered no Cancel for it (only queued, uploading and review rows), and
 * the engine's queue.cancel refused it, so the operator could not let go of a photo the account
 * could not pay for. Against the reference /v1 service: 6 diamonds, three photos at 4.
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { twoHeldShortOfDiamonds, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('cancels a photo held short of diamonds, which is not paid for', async () => {
  const { items } = await twoHeldShortOfDiamonds(fixture, {
    tmpName: 'cancel-held-short',
    seed: 35,
    email: 'cancel-held-short@ref.test',
  });
  const [held] = (await items()).filter((i) => i.waitReason === 'no_diamonds');

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  render(<BatchBoard />);
  // Before: no such button on a held row.
  fireEvent.click(screen.getByRole('button', { name: `Cancel ${held!.name}` }));
  await waitFor(async () => {
    const after = (await items()).find((i) => i.id === held!.id)!;
    expect(after.state).toBe('cancelled');
    expect(after.diamonds).toBe(0);
  });
  // Only the one named: the other held photo still waits for diamonds.
  expect((await items()).filter((i) => i.state === 'cancelled')).toHaveLength(1);
}, 60_000);
