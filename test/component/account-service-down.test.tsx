// @vitest-environment jsdom
/**
 * With the service down, the Account screen sat on "Loading the account…" for good, under the raw
 * error in the banner (review uirev B10). It now says in plain words that the account could not
 * be read, with "Try again" (which asks again) and the studio's words under Details. A real
 * studio on loopback against the reference /v1 service, which is then stopped.
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { AccountScreen } from '../../src/renderer/src/screens/AccountScreen';
import { useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('says the account could not be read, with a retry, when the service is down', async () => {
  const { dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'account-down',
    seed: 41,
    account: { email: 'account-down@ref.test', diamonds: 30 },
  });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  await service.close();

  render(<AccountScreen />);
  // Before: "Loading the account…" and nothing else, for as long as the service is down.
  const alert = await screen.findByRole('alert');
  expect(alert.textContent).toContain('The account could not be read');
  expect(screen.queryByText('Loading the account…')).toBeNull();

  fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
  await waitFor(() => expect(screen.getByText('Loading the account…')).toBeTruthy());
  await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('could not be read'));
});
