// @vitest-environment jsdom
/**
 * A photo whose create answer was lost may already be paid (review uirev A5): the board showed it
 * as "4 to pay" and counted it in "To spend", so the account looked shorter than it was. It now
 * says "may be paid" with its price, outside "To spend" and outside "Spent". It was also under no
 * filter, behind a grey "submitting" badge (B9): it is under "Needs you", its row marked. Against the reference
 * /v1 service behind a front that cuts the first create's answer once the service charged it, a
 * real studio on loopback and the renderer's HTTP transport.
 */
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { ItemView } from '../../src/shared/studio';
import { studio } from '../../src/renderer/src/transport';
import { rewritingFront } from '../integration/helpers/rewriting-front';
import {
  boardRow,
  pausedWithOnePhoto,
  useStudioAgainstReference,
} from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'maybe-paid-board@ref.test';

/** The studio's one photo, its create charged and its answer lost: uncertain. */
async function uncertainPhoto(seed: number) {
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'maybe-paid-board',
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
  const charged = service.ledger(EMAIL).filter((e) => e.kind === 'charge');
  expect(charged).toHaveLength(1);
  return { price: -charged[0]!.delta };
}

it('shows a photo whose create answer was lost as "may be paid", not "to pay"', async () => {
  const { price } = await uncertainPhoto(31);
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
  await uncertainPhoto(32);
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
