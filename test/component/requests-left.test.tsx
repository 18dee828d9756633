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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { cleanup, configure, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { AccountScreen } from '../../src/renderer/src/screens/AccountScreen';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { httpTransport, setTransport, studio } from '../../src/renderer/src/transport';
import type { Recipe } from '../../src/shared/studio';
import { openStudio } from '../../src/studio';
import { StudioEngine } from '../../src/studio/engine';
import { buildStudioWeb } from '../../src/studio/web';
import { shiftableClock } from '../integration/helpers/studio-fixtures';
import { startReferenceService } from '../reference-service';
import { resetStores } from './reset-stores';

configure({ asyncUtilTimeout: 15_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  cleanup();
  resetStores();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const recipe: Recipe = {
  request: {
    toolId: 'virtual_model',
    images: { fashion_model: 'person-001', garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};

it('remote mode: requests left today count against the service’s cap learned the day before, said so on the board, the account screen and the estimate', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-requests-left-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 7, timeScale: 0.02 });
  cleanups.push(() => service.close());
  // The service allows 10 a day; the studio is configured with the default 500.
  const { apiKey } = service.createAccount({ email: 'cap@ref.test', diamonds: 100, dailyCap: 10 });
  const dataDir = path.join(root, 'data');

  // Day 1: balance reads until the service's daily-cap 429; the studio remembers the cap it named.
  const day1 = new Date().toISOString().slice(0, 10);
  {
    const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
    const engine = new StudioEngine({ dataDir, client, apiKey });
    let reads = 0;
    while ((await engine.spending.setAnchor()) !== null) reads++;
    expect(reads).toBe(10);
    expect(engine.spending.dailyCap).toBe(500);
    await engine.close();
    await client.close();
  }

  // Day 2: a studio on the same data folder, paused, with one photo in a hot folder.
  shiftableClock((undo) => cleanups.push(undo)).nextDay();
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const opened = await openStudio({ dataDir, client, apiKey, settleMs: 200 });
  cleanups.push(() => opened.close());
  const web = buildStudioWeb({ engine: opened.engine, commands: opened.commands });
  await web.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    web.server.closeAllConnections();
    await web.close();
  });
  const address = web.server.address();
  setTransport(
    httpTransport(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`),
  );

  await studio().call('queue.pause', { paused: true });
  const hot = path.join(root, 'hot');
  fs.mkdirSync(hot);
  await studio().call('folders.add', { path: hot, outputDir: `${hot}-export`, recipe });
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#7a4b9c' } })
    .jpeg()
    .toFile(path.join(hot, 'p1.jpg'));
  await waitFor(async () => expect((await studio().call('queue.list', {})).items).toHaveLength(1));

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
  const estimate = await studio().call('recipe.estimate', { recipe, photos: 5 });
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
