// @vitest-environment jsdom
/**
 * A photo whose create answer was lost on a service that keeps no Idempotency-Key is uncertain:
 * the board said "check the service, then resubmit or fail" with nothing to press. Its row now
 * says why (the item's own words) and offers "Resubmit…", confirmed with what it may cost again,
 * and "Mark failed", which costs nothing. Against the reference /v1 service (written from the spec
 * alone) behind a front that cuts the first create's answer once the service charged it, a real
 * studio on loopback and the renderer's HTTP transport; charges are read from the service's ledger.
 */
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { FolderView, ItemView } from '../../src/shared/studio';
import { studio } from '../../src/renderer/src/transport';
import { rewritingFront } from '../integration/helpers/rewriting-front';
import {
  boardRow,
  pausedWithOnePhoto,
  useStudioAgainstReference,
} from './studio-against-reference';

const fixture = useStudioAgainstReference();

const EMAIL = 'uncertain-board@ref.test';

/** The studio's one photo sent through a front that loses the first create's answer: uncertain. */
async function uncertainPhoto(seed: number) {
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'uncertain-board',
    seed,
    account: { email: EMAIL, diamonds: 100 },
  });
  const cleanups: (() => Promise<void> | void)[] = [];
  fixture.onCleanup(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  let cut = false;
  const front = await rewritingFront(cleanups, service.url, (request, answer) => {
    const create = request.method === 'POST' && request.path === '/v1/generations';
    if (!create || cut || answer.status >= 300 || !request.body.includes('garment_photo'))
      return answer;
    cut = true;
    return 'cut';
  });
  const client = new HttpClient({ baseUrl: front, apiKey, timeoutMs: 5000 });
  fixture.onCleanup(() => client.close());
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithOnePhoto(root);
  await studio().call('queue.pause', { paused: false });
  const item = async () => ((await studio().call('queue.list', {})).items as ItemView[])[0]!;
  await waitFor(async () => expect((await item()).uncertain).toBe(true));
  const charges = () => service.ledger(EMAIL).filter((e) => e.kind === 'charge');
  expect(charges()).toHaveLength(1);
  // Its folder says what the lost create may have cost beside what it spent (review rev21 E): at
  // least its price (what the ceiling reserved for it, margin included).
  const folder = async () => ((await studio().call('folders.list', {})) as FolderView[])[0]!;
  expect((await folder()).diamondsSpent).toBe(0);
  expect((await folder()).diamondsUncertain).toBeGreaterThanOrEqual(-charges()[0]!.delta);
  return { item, charges, folder };
}

it('Resubmit… says what it may cost again, is confirmed, and sends the photo once more', async () => {
  const { item, charges, folder } = await uncertainPhoto(21);
  const row = await boardRow();
  expect(row.textContent).toContain('Submission uncertain');
  expect(row.textContent).toContain('Idempotency-Key');

  fireEvent.click(within(row as HTMLElement).getByRole('button', { name: 'Resubmit… p1.jpg' }));
  const dialog = await screen.findByRole('alertdialog', { name: 'Resubmit p1.jpg?' });
  const price = -charges()[0]!.delta;
  expect(dialog.textContent).toContain(`pays about ${price} diamonds again`);
  fireEvent.click(within(dialog).getByRole('button', { name: `Resubmit for ${price} diamonds` }));

  await waitFor(async () => expect((await item()).state).toBe('review'));
  expect(charges()).toHaveLength(2);
  expect((await item()).uncertain).toBe(false);
  expect(await folder()).toMatchObject({ diamondsUncertain: 0 });
});

it('Mark failed gives the photo up at no charge', async () => {
  const { item, charges } = await uncertainPhoto(22);
  const row = await boardRow();
  fireEvent.click(within(row as HTMLElement).getByRole('button', { name: 'Mark failed p1.jpg' }));
  await waitFor(async () => expect((await item()).state).toBe('failed'));
  expect((await item()).uncertain).toBe(false);
  // Nothing more is sent for it.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(charges()).toHaveLength(1);
});
