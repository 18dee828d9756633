// @vitest-environment jsdom
/**
 * The words a photo waits with at the service's cap as remembered ("…kept for the day's closing
 * balance read", `Budget.reserveWaitText`) go when that hold does: once the kept request is spent
 * (the gate then probes), or on a later day when another hold (here the service's 429) keeps the
 * photo. The board and `run`'s "not started" line read those words first, so stale ones named a
 * cap, a day and a kept request that no longer held. Against the reference /v1 service (written
 * from the spec alone), a real studio on loopback and the renderer's HTTP transport; the process's
 * clock is moved on a day at a time (service and studio alike).
 */
import { waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { studio } from '../../src/renderer/src/transport';
import type { ItemView } from '../../src/shared/studio';
import {
  boardRow,
  learnServiceCap,
  pausedWithOnePhoto,
  useStudioAgainstReference,
} from './studio-against-reference';

const fixture = useStudioAgainstReference();

const cap = 10;

/**
 * Day 0 the service's 429 names its cap; day 1 a studio (queue paused at the end) holds one photo
 * at the remembered cap with the reserve's words on it.
 */
async function heldAtTheReserve(seed: number) {
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'reserve-change',
    seed,
    account: { email: 'hold@ref.test', diamonds: 100, dailyCap: cap },
  });
  const day0 = (await learnServiceCap(service, apiKey, dataDir)).day;
  const clock = fixture.clock();
  clock.nextDay();
  const client = fixture.serviceClient(service, apiKey);
  const first = await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithOnePhoto(root);
  const spending = first.engine.spending;
  while (spending.requestsUsedToday() < cap - 1) await spending.setAnchor();
  await studio().call('queue.pause', { paused: false });
  await waitFor(async () => expect((await item()).error).toContain(`(learned ${day0})`));
  expect((await item()).error).toContain("kept for the day's closing balance read");
  return { service, apiKey, clock, client, dataDir, first };
}

async function item(): Promise<ItemView> {
  const [only] = (await studio().call('queue.list', {})).items;
  return only!;
}

it('on the next day, a photo held by the service’s 429 no longer says a request is kept', async () => {
  const { service, apiKey, clock, client, dataDir, first } = await heldAtTheReserve(5);
  await studio().call('queue.pause', { paused: true });
  await first.close();

  // Day 2: the service's cap is now 1, spent on a balance read; the reopened studio's price read
  // gets its 429, which closes the day. The photo, still queued, is held by that gate now.
  clock.nextDay();
  service.setDailyCap(apiKey, 1);
  const { engine } = await fixture.serveStudio({ dataDir, client, apiKey });
  await engine.spending.setAnchor();
  engine.loadPrices();
  await waitFor(() => expect(engine.gates.cap?.kind).toBe('service'));
  expect((await item()).error).toContain('closing balance read');
  await studio().call('queue.pause', { paused: false });
  await waitFor(async () => {
    const now = await item();
    expect(now).toMatchObject({ state: 'queued', waitReason: 'daily_cap' });
    expect(now.error ?? '').not.toContain('closing balance read');
  });

  // That 429 named the cap (1), which the request budget now plans with: no request left today.
  const row = await boardRow();
  await waitFor(() =>
    expect(row.textContent).toContain('Daily request cap reached: resumes at the next UTC day.'),
  );
  expect(row.textContent).not.toContain('closing balance read');
}, 60_000);

it('once the kept request is spent and the gate probes, the photo no longer says it is kept', async () => {
  const { engine } = (await heldAtTheReserve(6)).first;
  // The closing balance read takes the kept request: the day is spent, the gate probes now and then.
  await engine.spending.setAnchor();
  expect(engine.spending.reserveLeft()).toBe(false);
  await waitFor(() => expect(engine.gates.cap).toMatchObject({ kind: 'reserve', probing: true }));
  await waitFor(async () => {
    const now = await item();
    expect(now).toMatchObject({ state: 'queued', waitReason: 'daily_cap' });
    expect(now.error ?? '').not.toContain('closing balance read');
  });

  const row = await boardRow();
  await waitFor(() => expect(row.textContent).toContain('Daily request cap reached'));
  expect(row.textContent).not.toContain('closing balance read');
}, 60_000);
