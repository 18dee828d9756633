// @vitest-environment jsdom
/**
 * Photos held while the account is short of diamonds read "submitting" on the board (review
 * uirev30 walkthrough: 14 diamonds, 6 photos at 4: three rows "submitting", for minutes, beside
 * "Not enough diamonds"), and the toolbar counted "3 submitting": nothing was being sent, and
 * nothing was charged for them (the service refused the create 402). They now read "queued" and
 * are under "Waiting", as photos waiting their turn. Against the reference /v1 service.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'held-short@ref.test';

it('shows photos held short of diamonds as queued, not submitting', async () => {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: 'held-short',
    seed: 33,
    account: { email: EMAIL, diamonds: 6 },
  });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithPhotos(root, ['p1.jpg', 'p2.jpg', 'p3.jpg']);
  await studio().call('queue.pause', { paused: false });
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(
    async () => {
      const all = await items();
      expect(all.filter((i) => i.state === 'review')).toHaveLength(1);
      expect(all.filter((i) => i.waitReason === 'no_diamonds')).toHaveLength(2);
    },
    { timeout: 30_000 },
  );
  const held = (await items()).filter((i) => i.waitReason === 'no_diamonds');

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  render(<BatchBoard />);
  const photos = screen.getByRole('table', { name: 'Photos' });
  for (const item of held) {
    const row = within(photos).getByText(item.name).closest('tr')!;
    // Before: "submitting", the step the 402 left them at.
    expect(row.querySelector('.state')?.textContent).toBe('queued');
    expect(row.textContent).toMatch(/Not enough diamonds/);
  }
  expect(screen.getByText(/^2 queued · 1 review$/)).toBeTruthy();
  fireEvent.change(screen.getByRole('combobox', { name: 'State' }), {
    target: { value: 'waiting' },
  });
  expect(within(photos).getAllByRole('row').slice(1)).toHaveLength(2);
});
