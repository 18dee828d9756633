// @vitest-environment jsdom
/**
 * A photo waiting at the service's cap as remembered (issue 10, left over) says why in plain words:
 * the cap is reached but for one request, which is kept for the day's closing balance read. The
 * studio writes the words on the photo (`run`'s summary reads them after "not started: "), and the
 * board shows them. Against the reference /v1 service (written from the spec alone), a real studio
 * on loopback, and the renderer's HTTP transport; the process's clock is moved a day on between
 * the day the cap is learned and the day it is used (service and studio alike).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { cleanup, configure, render, screen, waitFor } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
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

it('a photo not started at the remembered cap says one request is kept for the closing balance read', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-reserve-wait-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 3, timeScale: 0.02 });
  cleanups.push(() => service.close());
  const cap = 10;
  const { apiKey } = service.createAccount({
    email: 'reserve@ref.test',
    diamonds: 100,
    dailyCap: cap,
  });
  const dataDir = path.join(root, 'data');

  // Day 1: balance reads until the service's daily-cap 429; the studio remembers the cap it named.
  const day1 = new Date().toISOString().slice(0, 10);
  {
    const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
    const engine = new StudioEngine({ dataDir, client, apiKey });
    while ((await engine.spending.setAnchor()) !== null);
    await engine.close();
    await client.close();
  }

  // Day 2: a paused studio with one photo in a hot folder.
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
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' } })
    .jpeg()
    .toFile(path.join(hot, 'p1.jpg'));
  await waitFor(async () => expect((await studio().call('queue.list', {})).items).toHaveLength(1));
  await useQueue.getState().load(); // the board's first read of the balance, while requests are left

  // The day's requests go to other reads (the account screen, say) until one is left: the one
  // kept for the closing balance read. Then the queue resumes.
  const spending = opened.engine.spending;
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

  render(<BatchBoard />);
  await useQueue.getState().load();
  const row = await waitFor(() => {
    const tr = document.querySelector('tr[data-item]');
    expect(tr).not.toBeNull();
    return tr!;
  });
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
