// @vitest-environment jsdom
/**
 * "Export again with these settings (N, free)…" was on the Export screen alone (review uirev30 1):
 * an operator who changed a folder's export preset and went on to its card, or to Review, found
 * no way to have the photos already exported written with it. Both now say how many were exported
 * with the earlier settings and offer it, with the same confirmation, free. Against the reference
 * /v1 service (its request log and ledger say what was asked and charged), a real studio on
 * loopback and the renderer's HTTP transport.
 */
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { ReviewScreen } from '../../src/renderer/src/screens/ReviewScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { studio } from '../../src/renderer/src/transport';
import { pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'export-again-where@ref.test';

// jsdom lays nothing out: the review grid's width observer has nothing to observe.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};

it('offers the free export again on the folder card and in Review once the preset changed', async () => {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: 'export-again-where',
    seed: 32,
    account: { email: EMAIL, diamonds: 100 },
  });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithPhotos(root);
  await studio().call('queue.pause', { paused: false });
  const item = async () => (await studio().call('queue.list', {})).items[0]!;
  await waitFor(async () => expect((await item()).state).toBe('review'));
  const { results } = await studio().call('results.list', {});
  await studio().call('review.set', { ids: results.map((r) => r.id), review: 'approved' });
  await waitFor(async () => expect((await item()).state).toBe('exported'));
  const exportedFile = async () =>
    (await studio().call('results.list', {})).results[0]?.exportedPath ?? null;
  const charges = () => service.ledger(EMAIL).length;
  const sent = () => service.requests().filter((r) => r.method !== 'GET').length;
  const [chargesBefore, sentBefore] = [charges(), sent()];

  const loadAll = () =>
    Promise.all([
      useFolders.getState().load(),
      useQueue.getState().load(),
      useResults.getState().load(),
    ]);
  await loadAll();
  // Exported with the settings the folder still has: nothing to offer.
  const { unmount } = render(<FoldersScreen />);
  expect(screen.queryByTestId('export-settings-changed')).toBeNull();
  unmount();

  // The operator changes the folder's preset (Edit recipe, or the Export screen's Save).
  const [folder] = useFolders.getState().folders;
  await useFolders.getState().setRecipe(folder!.id, {
    ...folder!.recipe,
    export: { ...folder!.recipe.export, preset: 'zalando' },
  });
  await loadAll();

  // Review says it too. Before: nothing there, the button on the Export screen alone.
  const review = render(<ReviewScreen />);
  const inReview = await screen.findByTestId('export-settings-changed');
  expect(inReview.textContent).toMatch(
    /^1 photo exported from hot was written with earlier export settings \(now Zalando/,
  );
  expect(
    within(inReview).getByRole('button', { name: 'Export again with these settings (1, free)…' }),
  ).toBeTruthy();
  review.unmount();

  render(<FoldersScreen />);
  const card = screen.getByRole('listitem', { name: 'Folder hot' });
  const offer = within(card).getByTestId('export-settings-changed');
  fireEvent.click(
    within(offer).getByRole('button', { name: 'Export again with these settings (1, free)…' }),
  );
  const dialog = await screen.findByRole('alertdialog', { name: 'Export 1 photo again?' });
  expect(dialog.textContent).toMatch(/nothing is sent to the service and nothing is charged/);
  fireEvent.click(within(dialog).getByRole('button', { name: 'Export again (free)' }));

  // Written again on the Zalando canvas, and the offer gone once it is.
  await waitFor(
    async () => {
      const file = await exportedFile();
      expect(file).not.toBeNull();
      expect(await sharp(file!).metadata()).toMatchObject({ width: 1801, height: 2600 });
    },
    { timeout: 30_000 },
  );
  await waitFor(async () => {
    await useQueue.getState().load();
    expect(screen.queryByTestId('export-settings-changed')).toBeNull();
  });
  expect(path.basename((await exportedFile())!)).toMatch(/^p1/);
  expect(charges()).toBe(chargesBefore);
  expect(sent()).toBe(sentBefore);
});
