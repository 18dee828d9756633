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
import type { FolderView } from '../../src/shared/studio';
import { studio } from '../../src/renderer/src/transport';
import { boardRow, useStudioAgainstReference } from './studio-against-reference';
import { uncertainPhoto } from './uncertain-photo';

const fixture = useStudioAgainstReference();

const EMAIL = 'uncertain-board@ref.test';

/** The studio's one photo sent through a front that loses the first create's answer: uncertain. */
async function uncertainOne(seed: number) {
  const { item, charges } = await uncertainPhoto(fixture, { email: EMAIL, seed, diamonds: 100 });
  // Its folder says what the lost create may have cost beside what it spent (review rev21 E): at
  // least its price (what the ceiling reserved for it, margin included).
  const folder = async () => ((await studio().call('folders.list', {})) as FolderView[])[0]!;
  expect((await folder()).diamondsSpent).toBe(0);
  expect((await folder()).diamondsUncertain).toBeGreaterThanOrEqual(-charges()[0]!.delta);
  return { item, charges, folder };
}

it('Resubmit… says what it may cost again, is confirmed, and sends the photo once more', async () => {
  const { item, charges, folder } = await uncertainOne(21);
  const row = await boardRow();
  expect(row.textContent).toContain('it may have charged');
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
  const { item, charges } = await uncertainOne(22);
  const row = await boardRow();
  fireEvent.click(within(row as HTMLElement).getByRole('button', { name: 'Mark failed p1.jpg' }));
  await waitFor(async () => expect((await item()).state).toBe('failed'));
  expect((await item()).uncertain).toBe(false);
  // Nothing more is sent for it.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(charges()).toHaveLength(1);
});
