// @vitest-environment jsdom
/**
 * "Requests left today" in remote mode (issue 10 item 7) counts against the cap in use: the
 * service's as its 429 named it on an earlier day when that is below the configured one, said
 * so beside the figure. The board, the account screen and a recipe's estimate read the same
 * count, which is the service's own count of the key's requests. Against the reference /v1
 * service (written from the spec alone), a real studio on loopback, and the renderer's HTTP
 * transport; the process's clock is moved a day on between the day the cap is learned and the
 * day it is used (service and studio alike).
 */
import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { AccountScreen } from '../../src/renderer/src/screens/AccountScreen';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import {
  learnServiceCap,
  pausedWithOnePhoto,
  useStudioAgainstReference,
  VIRTUAL_MODEL_RECIPE,
} from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('remote mode: requests left today count against the service’s cap learned the day before, said so on the board, the account screen and the estimate', async () => {
  // The service allows 10 a day; the studio is configured with the default 500.
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'requests-left',
    seed: 7,
    account: { email: 'cap@ref.test', diamonds: 100, dailyCap: 10 },
  });

  // Day 1: balance reads until the service's daily-cap 429; the studio remembers the cap it named.
  const learned = await learnServiceCap(service, apiKey, dataDir);
  expect(learned.reads).toBe(10);
  expect(learned.configuredCap).toBe(500);
  const day1 = learned.day;

  // Day 2: a studio on the same data folder, paused, with one photo in a hot folder.
  fixture.clock().nextDay();
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithOnePhoto(root);

  render(<BatchBoard />);
  const requestsLeft = () =>
    within(screen.getByRole('group', { name: 'Budget' }))
      .getByText('Requests left today')
      .closest('.stat')!
      .querySelector('strong')!.textContent;
  // The studio's count is the service's own count of this key's requests today (its reads of
  // the budget included), against the service's cap of 10, not the configured 500.
  await waitFor(async () => {
    await useQueue.getState().load();
    const used = service.requestsToday(apiKey);
    expect(used).toBeGreaterThan(0);
    expect(requestsLeft()).toBe(`${10 - used} of 10 (the service’s cap, learned ${day1})`);
  });

  // A recipe's estimate counts against the same cap: 5 photos do not fit in 10 requests.
  const budget = await studio().call('budget.get', {});
  const estimate = await studio().call('recipe.estimate', {
    recipe: VIRTUAL_MODEL_RECIPE,
    photos: 5,
  });
  expect(estimate.requestsLeftToday).toBe(budget.requestsLeftToday);
  expect(estimate.requestsLeftToday).toBe(10 - service.requestsToday(apiKey));
  expect(estimate.withinRequestBudget).toBe(false);

  cleanup();
  render(<AccountScreen />);
  const requestsToday = await screen.findByText('Requests today');
  await waitFor(() =>
    expect(requestsToday.nextElementSibling?.textContent).toMatch(
      new RegExp(`^\\d+ of 10 \\(the service’s cap, learned ${day1}\\)$`),
    ),
  );
});
