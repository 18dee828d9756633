// @vitest-environment jsdom
/**
 * A failed photo's way out was not on its row (review uirev30): a pack whose shot failed, then
 * one shot redone and that redo failed, showed one row ("failed") whose "Generate again…" sent the
 * redo alone; the failed shot of the first attempt could be retried from nowhere (its attempt sat
 * behind "Replaces an earlier attempt", a disclosure with no buttons), and no price was shown
 * before the press. The row now offers the retry of all its failed parts, priced.
 * Against the reference /v1 service (ready shoot shoot-02, shot take-2 always failing).
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { studio } from '../../src/renderer/src/transport';
import { retryIdsOf } from '../../src/renderer/src/attempts';
import { useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'failed-way-out@ref.test';

it('shows a failed photo its retry, failed shots of earlier attempts included, with the price', async () => {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: 'failed-way-out',
    seed: 41,
    account: { email: EMAIL, diamonds: 200 },
  });
  service.setOptions({ failShotIds: ['take-2'], catalogShotsField: true });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  const hot = path.join(root, 'hot');
  fs.mkdirSync(hot);
  await studio().call('folders.add', {
    path: hot,
    outputDir: `${hot}-export`,
    recipe: {
      request: { readyTemplateSetId: 'shoot-02', images: { garment_photo: '{photo}' } },
      export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{shot}-{n}' },
    },
  });
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' } })
    .jpeg()
    .toFile(path.join(hot, 'p1.jpg'));
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(async () => expect((await items())[0]?.state).toBe('review'), { timeout: 30_000 });
  const { results } = await studio().call('results.list', {});
  // The next job fails: the redo of one shot.
  service.setOptions({ failShotIds: ['take-1', 'take-2', 'take-3'] });
  await studio().call('review.redo', { resultIds: [results[0]!.id] });
  await waitFor(async () => expect((await items()).some((i) => i.state === 'failed')).toBe(true), {
    timeout: 30_000,
  });

  await Promise.all([
    useQueue.getState().load(),
    useFolders.getState().load(),
    useResults.getState().load(),
  ]);
  render(<BatchBoard />);
  const photos = screen.getByRole('table', { name: 'Photos' });
  const rows = within(photos).getAllByRole('row').slice(1);
  expect(rows).toHaveLength(1);
  const row = rows[0]!;
  expect(row.getAttribute('data-state')).toBe('failed');
  // Before: "Generate again…" alone, its price first said in the dialog after the press.
  const retry = within(row).getByRole('button', { name: 'Generate again… p1.jpg' });
  const price = await within(row).findByTestId('retry-price');
  const diamonds = /^about (\d+) diamonds$/.exec(price.textContent ?? '')?.[1];
  expect(diamonds).toBeDefined();
  expect(retry.getAttribute('aria-describedby')).toBe(price.id);
  fireEvent.click(retry);
  const dialog = await screen.findByRole('alertdialog', { name: 'Generate 1 photo again?' });
  // The same plan as the dialog's.
  expect(
    within(dialog).getByRole('button', { name: `Generate again for ${diamonds} diamonds` }),
  ).toBeTruthy();

  // The failed shots of an earlier attempt go with it: the service here names no shots (spec
  // 2.3), so the studio's per-shot record, as the embedded service fills it, is set on the first.
  const [earlier, latest] = (await studio().call('queue.list', {})).items;
  const withShots = { ...earlier!, failedShots: ['take-2'] };
  const redoOf = (shotIds: string[] | null, state = latest!.state) => ({
    ...latest!,
    state,
    recipe: {
      ...earlier!.recipe,
      request: { ...earlier!.recipe.request, ...(shotIds ? { shotIds } : {}) },
    },
  });
  // A redo of another shot since: the earlier attempt's lost shot goes with the row's retry.
  expect(retryIdsOf(redoOf(['take-1']), [withShots])).toEqual([latest!.id, earlier!.id]);
  expect(retryIdsOf(redoOf(['take-1'], 'review'), [withShots])).toEqual([earlier!.id]);
  expect(retryIdsOf(redoOf(['take-1'], 'review'), [earlier!])).toEqual([]);
  // A whole-photo redo since, or a redo of that very shot, asked it again: not offered, never
  // paid twice (review rev31 U2).
  expect(retryIdsOf(redoOf(null), [withShots])).toEqual([latest!.id]);
  expect(retryIdsOf(redoOf(null, 'review'), [withShots])).toEqual([]);
  expect(retryIdsOf(redoOf(['take-2'], 'review'), [withShots])).toEqual([]);
});
