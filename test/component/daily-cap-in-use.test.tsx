// @vitest-environment jsdom
/**
 * Settings' "In use now" names the cap the studio actually plans with (issue 10, left over): the
 * service's cap as its 429 named it on an earlier day when that is below the configured cap, with
 * the day it was learned and the configured cap beside it. Against the reference /v1 service
 * (written from the spec alone), a real studio on loopback with its settings file, and the
 * renderer's HTTP transport; the process's clock is moved a day on between the day the cap is
 * learned and the day it is used (service and studio alike).
 */
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { SettingsScreen } from '../../src/renderer/src/screens/SettingsScreen';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { resetStores } from './reset-stores';
import { learnServiceCap, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('Settings shows the service’s cap learned the day before as the cap in use, with the configured cap beside it', async () => {
  // The service allows 14 a day; the studio is configured with the default 500.
  const { dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'cap-in-use',
    seed: 11,
    account: { email: 'in-use@ref.test', diamonds: 50, dailyCap: 14 },
  });

  // Day 1: balance reads until the service's daily-cap 429; the studio remembers the cap it named.
  const learned = await learnServiceCap(service, apiKey, dataDir);
  expect(learned.reads).toBe(14);
  const day1 = learned.day;

  // Day 2: the studio as `dropshoot studio` serves it, Settings file included.
  fixture.clock().nextDay();
  const client = fixture.serviceClient(service, apiKey);
  const { engine } = await fixture.serveStudio({ dataDir, client, apiKey, settingsFile: true });
  expect(engine.spending.dailyCap).toBe(500);

  const shows = async () => {
    render(<SettingsScreen />);
    const inUse = await screen.findByTestId('daily-cap-in-use');
    await waitFor(() => expect(inUse.textContent).toBe('14 a day'));
    expect(inUse.parentElement!.textContent).toContain(
      `In use now: 14 a day (the service’s cap, learned ${day1}; your setting 500).`,
    );
    // The field still holds the configured cap: what is saved, not what the service named.
    expect(screen.getByRole('textbox', { name: 'Requests a day (daily cap)' })).toHaveProperty(
      'value',
      '500',
    );
  };
  // As the app opens: the queue and budget loaded first.
  await useQueue.getState().load();
  await shows();
  // Settings opened with nothing loaded yet: the form reads the cap in use itself.
  cleanup();
  resetStores();
  await shows();
});
