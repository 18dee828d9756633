// @vitest-environment jsdom
/**
 * "Generate again … for 32 diamonds" was confirmed with 30 left and no word of the balance (review
 * uirev B11). The dialog now says what the account holds, and plainly when the price is above it.
 * A photo made uncertain (its create charged, the answer lost: uncertain-photo.ts) and marked
 * failed, on an account that held just its price (so 0 left) or more.
 */
import path from 'node:path';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import sharp from 'sharp';
import { expect, it } from 'vitest';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { boardRow, useStudioAgainstReference } from './studio-against-reference';
import { uncertainPhoto } from './uncertain-photo';

const fixture = useStudioAgainstReference();

/** The photo marked failed, then (after `before`) "Generate again…" pressed: its dialog. */
async function generateAgainDialog(
  diamonds: number,
  seed: number,
  before: (hot: string) => Promise<void> = async () => {},
) {
  const { price, root, item } = await uncertainPhoto(fixture, {
    email: `generate-again-${seed}@ref.test`,
    seed,
    diamonds,
  });
  const row = (await boardRow()) as HTMLElement;
  fireEvent.click(within(row).getByRole('button', { name: 'Mark failed p1.jpg' }));
  await waitFor(async () => expect((await item()).state).toBe('failed'));
  await useQueue.getState().load();
  await waitFor(() => expect(useQueue.getState().budget?.diamondBalance).toBe(diamonds - price));
  await before(path.join(root, 'hot'));
  fireEvent.click(await screen.findByRole('button', { name: 'Generate again… p1.jpg' }));
  const dialog = await screen.findByRole('alertdialog', { name: 'Generate 1 photo again?' });
  return { dialog, price };
}

it('says plainly when the price is above the balance', async () => {
  const { dialog, price } = await generateAgainDialog(4, 51);
  expect(price).toBe(4);
  // Before: "costs about 4 diamonds", and nothing of the 0 left.
  expect(dialog.textContent).toContain('That is more than the account holds (0 diamonds)');
});

it('says the balance when the price fits in it', async () => {
  const { dialog } = await generateAgainDialog(20, 52);
  expect(dialog.textContent).toContain('The account holds 16 diamonds.');
  expect(within(dialog).queryByTestId('over-balance')).toBeNull();
});

it('counts what photos queued before these are to spend', async () => {
  const { dialog } = await generateAgainDialog(20, 53, async (hot) => {
    await studio().call('queue.pause', { paused: true });
    for (const [i, background] of ['#a33', '#3a3', '#33a', '#aa3'].entries())
      await sharp({ create: { width: 320, height: 400, channels: 3, background } })
        .jpeg()
        .toFile(path.join(hot, `q${i}.jpg`));
    await waitFor(async () =>
      expect((await studio().call('queue.list', {})).items).toHaveLength(5),
    );
    await useQueue.getState().load();
  });
  // 16 left, 16 to spend on the four queued photos, 4 more here. Before: "The account holds 16 diamonds."
  expect(dialog.textContent).toContain(
    'That is more than the account holds (16 diamonds, 16 diamonds of it to spend on photos queued before these)',
  );
});
