// @vitest-environment jsdom
/**
 * Settings' "In use now" when the budget cannot be read: the form says so with the studio's
 * error, instead of "…" for good. A real studio on loopback with its settings file, and the
 * renderer's HTTP transport; the studio's engine is closed (its database with it) after it starts
 * serving, so `budget.get` fails while the settings file still answers.
 */
import { render, screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { SettingsScreen } from '../../src/renderer/src/screens/SettingsScreen';
import { studio } from '../../src/renderer/src/transport';
import { useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('Settings shows why the cap in use could not be read', async () => {
  const { dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'cap-error',
    seed: 4,
    account: { email: 'err@ref.test', diamonds: 10 },
  });
  const client = fixture.serviceClient(service, apiKey);
  const served = await fixture.serveStudio({ dataDir, client, apiKey, settingsFile: true });
  await served.closeStudio();
  const failure = await studio()
    .call('budget.get', {})
    .then(
      () => null,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  expect(failure).not.toBeNull();

  render(<SettingsScreen />);
  const inUse = await screen.findByTestId('daily-cap-in-use');
  await waitFor(() => expect(inUse.textContent).toBe(`not read (${failure})`));
});
