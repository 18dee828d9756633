// @vitest-environment jsdom
/**
 * The board's "Diamonds left" says when the balance was read when the studio answered from an
 * older read (here: a day closed at the studio's own cap, where a read would be refused).
 * Against the reference /v1 service (written from the spec alone), a real studio on loopback and
 * the renderer's HTTP transport; the process's clock (studio and board alike) is moved a minute on
 * past the read.
 */
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { pausedWithOnePhoto, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('Diamonds left says when the balance was read once it is answered from an older read', async () => {
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'balance-read-at',
    seed: 8,
    account: { email: 'asof@ref.test', diamonds: 77, dailyCap: 50 },
  });
  const client = fixture.serviceClient(service, apiKey);
  const { engine } = await fixture.serveStudio({ dailyCap: 12, dataDir, client, apiKey });
  await pausedWithOnePhoto(root);

  // Just read: the balance alone.
  await useQueue.getState().load();
  const readAt = useQueue.getState().budget?.diamondBalanceReadAt;
  expect(readAt).toBeTruthy();
  render(<BatchBoard />);
  const stats = () => screen.getByRole('group', { name: 'Budget' }).textContent;
  await waitFor(() => expect(stats()).toContain('Diamonds left77'));
  expect(stats()).not.toContain('as of');
  cleanup();

  // Other reads (the closing balance reads of runs, say) take the day's requests to the studio's
  // cap: the day is closed, a read now would be refused.
  while (!engine.dayClosed()) await engine.spending.setAnchor();

  // A minute on, the board's read is answered from the last read, and says when that was.
  fixture.clock().moveOn(60_000);
  await useQueue.getState().load();
  expect(useQueue.getState().budget?.diamondBalanceReadAt).toBe(readAt);
  render(<BatchBoard />);
  await waitFor(() =>
    expect(stats()).toContain(`Diamonds left77 (as of ${readAt!.slice(11, 16)} UTC)`),
  );
});
