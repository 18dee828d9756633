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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { cleanup, configure, render, waitFor } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { httpTransport, setTransport, studio } from '../../src/renderer/src/transport';
import type { ItemView, Recipe } from '../../src/shared/studio';
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

const cap = 10;

/**
 * Day 0 the service's 429 names its cap; day 1 a studio (queue paused at the end) holds one photo
 * at the remembered cap with the reserve's words on it.
 */
async function heldAtTheReserve(seed: number) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-reserve-change-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed, timeScale: 0.02 });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({
    email: 'hold@ref.test',
    diamonds: 100,
    dailyCap: cap,
  });
  const dataDir = path.join(root, 'data');
  const day0 = new Date().toISOString().slice(0, 10);
  {
    const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
    const engine = new StudioEngine({ dataDir, client, apiKey });
    while ((await engine.spending.setAnchor()) !== null);
    await engine.close();
    await client.close();
  }
  const clock = shiftableClock((undo) => cleanups.push(undo));
  clock.nextDay();
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const first = await serve(dataDir, client, apiKey);
  await studio().call('queue.pause', { paused: true });
  const hot = path.join(root, 'hot');
  fs.mkdirSync(hot);
  await studio().call('folders.add', { path: hot, outputDir: `${hot}-export`, recipe });
  await sharp({ create: { width: 320, height: 400, channels: 3, background: '#4b7a9c' } })
    .jpeg()
    .toFile(path.join(hot, 'p1.jpg'));
  await waitFor(async () => expect((await studio().call('queue.list', {})).items).toHaveLength(1));
  const spending = first.engine.spending;
  while (spending.requestsUsedToday() < cap - 1) await spending.setAnchor();
  await studio().call('queue.pause', { paused: false });
  await waitFor(async () => expect((await item()).error).toContain(`(learned ${day0})`));
  expect((await item()).error).toContain("kept for the day's closing balance read");
  return { service, apiKey, clock, client, dataDir, first };
}

/** A studio on `dataDir` behind its web server, the renderer's transport pointed at it. */
async function serve(dataDir: string, client: HttpClient, apiKey: string) {
  const opened = await openStudio({ dataDir, client, apiKey, settleMs: 200 });
  const web = buildStudioWeb({ engine: opened.engine, commands: opened.commands });
  await web.listen({ host: '127.0.0.1', port: 0 });
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    web.server.closeAllConnections();
    await web.close();
    await opened.close();
  };
  cleanups.push(close);
  const address = web.server.address();
  setTransport(
    httpTransport(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`),
  );
  return { engine: opened.engine, close };
}

async function item(): Promise<ItemView> {
  const [only] = (await studio().call('queue.list', {})).items;
  return only!;
}

async function boardRow(): Promise<Element> {
  render(<BatchBoard />);
  await useQueue.getState().load();
  return waitFor(() => {
    const tr = document.querySelector('tr[data-item]');
    expect(tr).not.toBeNull();
    return tr!;
  });
}

it('on the next day, a photo held by the service’s 429 no longer says a request is kept', async () => {
  const { service, apiKey, clock, client, dataDir, first } = await heldAtTheReserve(5);
  await studio().call('queue.pause', { paused: true });
  await first.close();

  // Day 2: the service's cap is now 1, spent on a balance read; the reopened studio's price read
  // gets its 429, which closes the day. The photo, still queued, is held by that gate now.
  clock.nextDay();
  service.setDailyCap(apiKey, 1);
  const { engine } = await serve(dataDir, client, apiKey);
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

  const row = await boardRow();
  await waitFor(() =>
    expect(row.textContent).toContain('The service says its daily request cap is reached'),
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
