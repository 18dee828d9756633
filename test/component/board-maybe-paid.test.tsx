// @vitest-environment jsdom
/**
 * A photo whose create answer was lost may already be paid (review uirev A5): the board showed it
 * as "4 to pay" and counted it in "To spend", so the account looked shorter than it was. It now
 * says "may be paid" with its price, outside "To spend" and outside "Spent". It was also under no
 * filter, behind a grey "submitting" badge (B9): it is under "Needs you", its row marked. Set-up:
 * uncertain-photo.ts (reference /v1 service, the first create's answer cut once charged).
 */
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { boardRow, useStudioAgainstReference } from './studio-against-reference';
import { uncertainPhoto } from './uncertain-photo';

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
