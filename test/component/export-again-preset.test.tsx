// @vitest-environment jsdom
/**
 * After a change of export preset there was no way to export again: "Export again" covered failed
 * exports only, and an exported photo could be made again only by a paid Redo (review uirev B5).
 * The Export screen now writes the folder's exported photos again with its saved settings: the
 * results already paid for, nothing sent to the service, nothing charged. Against the reference
 * /v1 service (its request log and ledger say what was asked and charged), a real studio on
 * loopback and the renderer's HTTP transport.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { ExportScreen } from '../../src/renderer/src/screens/ExportScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { studio } from '../../src/renderer/src/transport';
import { pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'export-again@ref.test';

it('exports a paid photo again with the new preset, asking and charging nothing', async () => {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: 'export-again',
    seed: 31,
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
  const out = path.join(root, 'hot-export');
  const exportedFile = async () => {
    const [result] = (await studio().call('results.list', {})).results;
    return result?.exportedPath ?? null;
  };
  const before = (await exportedFile())!;
  // The result as made ('original' preset), not on the Zalando canvas.
  expect((await sharp(before).metadata()).height).not.toBe(2600);
  const charges = () => service.ledger(EMAIL).length;
  const sent = () => service.requests().filter((r) => r.method !== 'GET').length;
  const [chargesBefore, sentBefore] = [charges(), sent()];

  await Promise.all([
    useFolders.getState().load(),
    useQueue.getState().load(),
    useResults.getState().load(),
  ]);
  render(<ExportScreen />);
  const form = screen.getByRole('form', { name: 'Export settings' });
  fireEvent.change(within(form).getByRole('combobox', { name: 'Preset' }), {
    target: { value: 'zalando' },
  });
  // Not with settings still unsaved: it writes what the folder holds.
  const again = within(form).getByRole('button', { name: /^Export again with these settings/ });
  expect((again as HTMLButtonElement).disabled).toBe(true);
  fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
  await waitFor(() => expect((again as HTMLButtonElement).disabled).toBe(false));
  expect(again.textContent).toBe('Export again with these settings (1, free)…');
  fireEvent.click(again);
  const dialog = await screen.findByRole('alertdialog', { name: 'Export 1 photo again?' });
  expect(dialog.textContent).toMatch(/nothing is sent to the service and nothing is charged/);
  fireEvent.click(within(dialog).getByRole('button', { name: 'Export again (free)' }));

  // Written again on the Zalando canvas, in place of the first file.
  await waitFor(
    async () => {
      const file = await exportedFile();
      expect(file).not.toBeNull();
      expect(await sharp(file!).metadata()).toMatchObject({ width: 1801, height: 2600 });
    },
    { timeout: 30_000 },
  );
  await waitFor(async () => expect((await item()).state).toBe('exported'));
  expect(fs.readdirSync(out).filter((f) => !f.startsWith('.'))).toEqual([
    path.basename((await exportedFile())!),
  ]);
  expect(charges()).toBe(chargesBefore);
  expect(sent()).toBe(sentBefore);
});
