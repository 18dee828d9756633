// @vitest-environment jsdom
/**
 * The uncertain photo's row was written for engineers (review uirev C2): "this service does not
 * confirm Idempotency-Key: asked under the same key with a body it must refuse, it refused the body
 * (Unknown toolId 'dropshoot-key-probe-no-such-id')". It now says what happened (the service may
 * have charged it, and how much), what Dropshoot does (it never pays twice) and what the operator
 * can do; the engine's words are kept under Details. Against the reference /v1 service behind a
 * front that cuts the first create's answer once the service charged it.
 */
import { within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { boardRow, useStudioAgainstReference } from './studio-against-reference';
import { uncertainPhoto } from './uncertain-photo';

const fixture = useStudioAgainstReference();

it('tells the operator what happened, what Dropshoot does and what to do; the rest under Details', async () => {
  const { price } = await uncertainPhoto(fixture, {
    email: 'uncertain-words@ref.test',
    seed: 23,
    diamonds: 100,
  });
  const row = (await boardRow()) as HTMLElement;
  const details = row.querySelector('details');
  expect(details?.querySelector('summary')?.textContent).toBe('Details');
  expect(details?.textContent).toContain('Idempotency-Key');
  // What the row says outside the disclosure.
  const reason = [...details!.parentElement!.childNodes]
    .filter((n) => n !== details)
    .map((n) => n.textContent)
    .join('');
  expect(reason).toContain(`it may have charged ${price} diamonds`);
  expect(reason).toContain('never paid twice');
  expect(reason).toMatch(/Check the balance or the service’s job list/);
  expect(reason).toMatch(/“Resubmit…” sends it once more.*“Mark failed” stops here/);
  // A charged one's result is not thrown away unsaid (review rev29 D6).
  expect(reason).toMatch(/its result is waiting in the service’s job list/);
  for (const jargon of ['Idempotency', 'probe', 'body', 'toolId'])
    expect(reason).not.toContain(jargon);
  expect(within(row).getByRole('button', { name: 'Resubmit… p1.jpg' })).toBeTruthy();
  expect(within(row).getByRole('button', { name: 'Mark failed p1.jpg' })).toBeTruthy();
});
