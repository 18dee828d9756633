// @vitest-environment jsdom
/**
 * "Stop watching" a folder whose photos are held short of diamonds (a 402 leaves them at
 * "submitting", nothing paid): it cancelled only photos at "queued", so the held ones stayed and
 * were paid for once the account was topped up, and its dialog counted none of them (review
 * rev34 M2: 3 charged after the folder was removed). Against the reference /v1 service: 6
 * diamonds, three photos at 4.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { twoHeldShortOfDiamonds, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'stop-watching-held@ref.test';

it('cancels the photos held unsent, and a top-up then pays for none of them', async () => {
  const { service, items } = await twoHeldShortOfDiamonds(fixture, {
    tmpName: 'stop-watching-held',
    seed: 36,
    email: EMAIL,
  });
  const charges = () => service.ledger(EMAIL).filter((e) => e.kind === 'charge').length;
  expect(charges()).toBe(1);

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  render(<FoldersScreen />);
  fireEvent.click(screen.getByRole('button', { name: 'Stop watching' }));
  const dialog = await screen.findByRole('alertdialog');
  // Before: the two held photos were not counted.
  expect(dialog.textContent).toMatch(/2 photos still queued will be cancelled/);
  fireEvent.click(within(dialog).getByRole('button', { name: 'Stop watching' }));
  await waitFor(async () =>
    expect((await items()).filter((i) => i.state === 'cancelled')).toHaveLength(2),
  );

  // The account is topped up: nothing of the folder goes any more. Before: both created and paid.
  service.grant(EMAIL, 100);
  await new Promise((r) => setTimeout(r, 8_000));
  expect(charges()).toBe(1);
  expect((await items()).filter((i) => i.state === 'review')).toHaveLength(1);
}, 90_000);
