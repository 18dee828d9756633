// @vitest-environment jsdom
/**
 * Review uirev B8/B2 leftovers. In the loupe, R (redo) and U (undo) did nothing, though the grid
 * takes both: they now do the same there (R priced and confirmed, U undoes the last decision);
 * and X in the loupe closed it (the decided result left the shown ones before the next was focused).
 * "Approve all shown" counted a cancelled photo's result (never exported): it leaves it out. A
 * real headless studio (embedded service) with two photos made and waiting for review.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { ReviewScreen } from '../../src/renderer/src/screens/ReviewScreen';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { studio } from '../../src/renderer/src/transport';
import type { ItemView, ResultView } from '../../src/shared/studio';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

// jsdom lays nothing out: the grid's width observer has nothing to observe.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};

/** A folder of its own with two photos, both made and waiting for review; their items. */
async function twoInReview(name: string, colours: [string, string]): Promise<ItemView[]> {
  const hot = await watchedFolder(harness().root, name);
  for (const [i, colour] of colours.entries())
    await sharp({ create: { width: 320, height: 400, channels: 3, background: colour } })
      .jpeg()
      .toFile(path.join(hot, `${name}-${i}.jpg`));
  const mine = async () =>
    ((await studio().call('queue.list', {})).items as ItemView[]).filter((i) =>
      i.name.startsWith(`${name}-`),
    );
  await waitFor(async () =>
    expect((await mine()).map((i) => i.state)).toEqual(['review', 'review']),
  );
  return mine();
}
const reviews = async () =>
  Object.fromEntries(
    ((await studio().call('results.list', {})).results as ResultView[]).map((r) => [
      r.id,
      r.review,
    ]),
  );

it('takes R and U in the loupe as the grid does', async () => {
  await twoInReview('loupe', ['#4b7a9c', '#9c4b7a']);
  await useQueue.getState().load();
  await useResults.getState().load();
  render(<ReviewScreen />);
  const compare = (await screen.findByRole('button', { name: /^Compare/ })) as HTMLButtonElement;
  await waitFor(() => expect(compare.disabled).toBe(false));
  fireEvent.click(compare);
  // jsdom's role queries skip the modal overlay; it is found by its label.
  const loupe = () =>
    document.querySelector<HTMLElement>('[aria-label="Compare before and after"]')!;
  await waitFor(() => expect(loupe()).not.toBeNull());
  const first = useResults.getState().focusedId!;

  fireEvent.keyDown(loupe(), { key: 'x' });
  await waitFor(async () => expect((await reviews())[first]).toBe('rejected'));
  expect(loupe()).not.toBeNull();
  // Before: U did nothing in the loupe; the first result stayed rejected.
  fireEvent.keyDown(loupe(), { key: 'u' });
  await waitFor(async () => expect((await reviews())[first]).toBe('pending'));

  // Before: R did nothing in the loupe; now it asks, with the price, as on the grid.
  fireEvent.keyDown(loupe(), { key: 'r' });
  expect(await screen.findByRole('alertdialog', { name: 'Redo 1 result?' })).toBeTruthy();
});

it('leaves a cancelled photo’s result out of “Approve all shown”', async () => {
  const [kept, cancelled] = await twoInReview('approve', ['#7a9c4b', '#c0a030']);
  await studio().call('queue.cancel', { ids: [cancelled!.id] });
  await useQueue.getState().load();
  await useResults.getState().load();
  const pending = Object.values(useResults.getState().results).filter(
    (r) => r.review === 'pending' && [kept!.id, cancelled!.id].includes(r.itemId),
  );
  expect(pending).toHaveLength(2);
  // Only this folder's results: the first test's are decided or redone.
  for (const r of Object.values(useResults.getState().results))
    if (!pending.includes(r))
      await studio().call('review.set', { ids: [r.id], review: 'rejected' });
  await useResults.getState().load();
  render(<ReviewScreen />);
  // Before: "Approve all shown (2)", and the cancelled photo's result approved with the other.
  const button = await screen.findByRole('button', { name: 'Approve all shown (1)' });
  fireEvent.click(button);
  await waitFor(async () => {
    const now = await reviews();
    expect(pending.map((r) => [r.itemId === kept!.id, now[r.id]])).toEqual(
      expect.arrayContaining([
        [true, 'approved'],
        [false, 'pending'],
      ]),
    );
  });
});
