// @vitest-environment jsdom
/**
 * A photo whose create answer was lost may already be paid (review uirev A5): the board showed it
 * as "4 to pay" and counted it in "To spend", so the account looked shorter than it was. It now
 * says "may be paid" with its price, outside "To spend" and outside "Spent"; held while the account
 * is short, it says so instead of "Not enough diamonds" (the review's 402 case). It was also under no
 * filter, behind a grey "submitting" badge (B9): it is under "Needs you", its row marked. Set-up:
 * uncertain-photo.ts (reference /v1 service, the first create's answer cut once charged).
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import type { ItemView } from '../../src/shared/studio';
import { boardRow, pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';
import { studioLosingFirstCreateAnswer, uncertainPhoto } from './uncertain-photo';

const fixture = useStudioAgainstReference();
const EMAIL = 'maybe-paid-board@ref.test';

const uncertain = (seed: number) => uncertainPhoto(fixture, { email: EMAIL, seed, diamonds: 100 });

it('shows a photo whose create answer was lost as "may be paid", not "to pay"', async () => {
  const { price } = await uncertain(31);
  const row = (await boardRow()) as HTMLElement;
  const stat = (label: string) =>
    within(document.querySelector('[aria-label="Budget"]') as HTMLElement)
      .getByText(label)
      .parentElement!.querySelector('strong')!.textContent;
  await waitFor(() => expect(row.textContent).toContain(`may be paid (${price})`));
  // Before: "4 to pay", and "To spend" 4.
  expect(row.textContent).not.toContain('to pay');
  expect(stat('To spend')).toBe('0');
  expect(stat('Spent')).toBe('0');
});

it('puts the uncertain photo under "Needs you", its row marked so', async () => {
  await uncertain(32);
  const row = (await boardRow()) as HTMLElement;
  // Before: a grey "submitting" badge, and no filter but "All states" and "Working" showed it.
  expect(within(row).getByText('needs you').className).toContain('state-attention');
  const filter = screen.getByRole('combobox', { name: 'State' }) as HTMLSelectElement;
  const needs = within(filter).getByRole('option', { name: 'Needs you (1)' }) as HTMLOptionElement;
  fireEvent.change(filter, { target: { value: needs.value } });
  expect(filter.value).toBe('needs');
  expect(document.querySelectorAll('tr[data-item]')).toHaveLength(1);
  fireEvent.change(filter, { target: { value: 'review' } });
  expect(document.querySelectorAll('tr[data-item]')).toHaveLength(0);
});

it('says a photo held for diamonds after its create answer was lost may be paid, not "Not enough diamonds"', async () => {
  // Two photos on an account holding one's price: the first create is charged and its answer cut,
  // the second is refused (402). Both wait for diamonds; only the second is still to pay.
  const { root, service } = await studioLosingFirstCreateAnswer(fixture, {
    email: EMAIL,
    seed: 33,
    diamonds: 4,
  });
  await pausedWithPhotos(root, ['p0.jpg', 'p1.jpg']);
  const items = async () => (await studio().call('queue.list', {})).items as ItemView[];
  await studio().call('queue.pause', { paused: false });
  await waitFor(async () =>
    expect((await items()).map((i) => [i.waitReason, i.maybeCharged])).toEqual(
      expect.arrayContaining([
        ['no_diamonds', true],
        ['no_diamonds', false],
      ]),
    ),
  );
  expect(service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(1);

  render(<BatchBoard />);
  await useQueue.getState().load();
  const rows = await waitFor(() => {
    const all = [...document.querySelectorAll('tr[data-item]')];
    expect(all).toHaveLength(2);
    return all.map((row) => row.textContent ?? '');
  });
  const lost = rows.find((text) => text.includes('may be paid'));
  // Before: both rows "Not enough diamonds … 4 to pay", and "To spend" 8.
  expect(lost).toContain('it may be paid already');
  expect(lost).not.toContain('Not enough diamonds');
  expect(lost).toContain('may be paid (4)');
  expect(rows.filter((text) => text.includes('4 to pay'))).toHaveLength(1);
  expect(
    within(screen.getByRole('group', { name: 'Budget' }))
      .getByText('To spend')
      .parentElement!.querySelector('strong')!.textContent,
  ).toBe('4');
});
