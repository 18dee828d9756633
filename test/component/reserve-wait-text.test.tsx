// @vitest-environment jsdom
/**
 * A photo waiting at the service's cap as remembered (issue 10, left over) says why in plain words:
 * the cap is reached but for one request, which is kept for the day's closing balance read. The
 * studio writes the words on the photo (`run`'s summary reads them after "not started: "), and the
 * board shows them. Against the reference /v1 service (written from the spec alone), a real studio
 * on loopback, and the renderer's HTTP transport; the process's clock is moved a day on between
 * the day the cap is learned and the day it is used (service and studio alike).
 */
import { screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import {
  boardRow,
  learnServiceCap,
  pausedWithOnePhoto,
  useStudioAgainstReference,
} from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('a photo not started at the remembered cap says one request is kept for the closing balance read', async () => {
  const cap = 10;
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'reserve-wait',
    seed: 3,
    account: { email: 'reserve@ref.test', diamonds: 100, dailyCap: cap },
  });

  // Day 1: balance reads until the service's daily-cap 429; the studio remembers the cap it named.
  const day1 = (await learnServiceCap(service, apiKey, dataDir)).day;

  // Day 2: a paused studio with one photo in a hot folder.
  fixture.clock().nextDay();
  const client = fixture.serviceClient(service, apiKey);
  const { engine } = await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithOnePhoto(root);
  await useQueue.getState().load(); // the board's first read of the balance, while requests are left

  // The day's requests go to other reads (the account screen, say) until one is left: the one
  // kept for the closing balance read. Then the queue resumes.
  const spending = engine.spending;
  while (spending.requestsUsedToday() < cap - 1) await spending.setAnchor();
  expect(service.requestsToday(apiKey)).toBe(cap - 1);
  await studio().call('queue.pause', { paused: false });

  const expected = `the service's daily cap of ${cap} (learned ${day1}) is reached but for one request, kept for the day's closing balance read; resumes at 00:00 UTC`;
  await waitFor(async () => {
    const [item] = (await studio().call('queue.list', {})).items;
    expect(item).toMatchObject({ state: 'queued', waitReason: 'daily_cap', error: expected });
  });
  // Nothing was sent for the photo: the kept request is still there.
  expect(service.requestsToday(apiKey)).toBe(cap - 1);

  const row = await boardRow();
  await waitFor(() => expect(row.textContent).toContain(`The service's daily cap of ${cap}`));
  const said = row.textContent!.match(/closing balance read/g) ?? [];
  expect(said).toHaveLength(1);
  expect(row.textContent).toContain(
    `The service's daily cap of ${cap} (learned ${day1}) is reached but for one request, kept for the day's closing balance read; resumes at 00:00 UTC.`,
  );
  expect(screen.getByRole('group', { name: 'Budget' }).textContent).toContain(
    `of ${cap} (the service’s cap, learned ${day1})`,
  );
});
