// @vitest-environment jsdom
/**
 * Photos held short of diamonds said "top up to go on" (the folder card, the board's ETA) and
 * "resumes when the balance allows" (the row): neither said which account nor where. The spec
 * gives no top-up address, so the words name the account behind the studio's key and the
 * service it is at. Against the reference /v1 service: 6 diamonds, three photos at 4.
 */
import { render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useCatalog } from '../../src/renderer/src/stores/catalog-store';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'top-up-where@ref.test';

it('says where to add diamonds for photos held short of them', async () => {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: 'top-up-where',
    seed: 36,
    account: { email: EMAIL, diamonds: 6 },
  });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithPhotos(root, ['p1.jpg', 'p2.jpg', 'p3.jpg']);
  await studio().call('queue.pause', { paused: false });
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(
    async () =>
      expect((await items()).filter((i) => i.waitReason === 'no_diamonds')).toHaveLength(2),
    { timeout: 30_000 },
  );
  const [held] = (await items()).filter((i) => i.waitReason === 'no_diamonds');

  await Promise.all([
    useQueue.getState().load(),
    useFolders.getState().load(),
    useCatalog.getState().loadAccount(),
  ]);
  const where = `add diamonds to the account ${EMAIL} at ${useCatalog.getState().account!.serviceUrl}, the account of the studio’s API key`;
  const board = render(<BatchBoard />);
  const row = within(screen.getByRole('table', { name: 'Photos' }))
    .getByText(held!.name)
    .closest('tr')!;
  // Before: 'Not enough diamonds: resumes when the balance allows.'
  expect(row.textContent).toContain(`Not enough diamonds: ${where}; it resumes by itself`);
  board.unmount();
  render(<FoldersScreen />);
  // Before: '2 held: short of diamonds (top up to go on)'.
  expect(screen.getByTestId('folder-held').textContent).toBe(
    `2 held: short of diamonds (${where} to go on)`,
  );
}, 60_000);
