// @vitest-environment jsdom
/**
 * Settings' "In use now" names the cap the studio actually plans with (issue 10, left over): the
 * service's cap as its 429 named it on an earlier day when that is below the configured cap, with
 * the day it was learned and the configured cap beside it. Against the reference /v1 service
 * (written from the spec alone), a real studio on loopback with its settings file, and the
 * renderer's HTTP transport; the process's clock is moved a day on between the day the cap is
 * learned and the day it is used (service and studio alike).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanup, configure, render, screen, waitFor } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { SettingsScreen } from '../../src/renderer/src/screens/SettingsScreen';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { httpTransport, setTransport } from '../../src/renderer/src/transport';
import { openStudio } from '../../src/studio';
import { StudioEngine } from '../../src/studio/engine';
import { studioSettingsPort } from '../../src/studio/host/studio-settings-file';
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

it('Settings shows the service’s cap learned the day before as the cap in use, with the configured cap beside it', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-cap-in-use-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 11, timeScale: 0.02 });
  cleanups.push(() => service.close());
  // The service allows 14 a day; the studio is configured with the default 500.
  const { apiKey } = service.createAccount({
    email: 'in-use@ref.test',
    diamonds: 50,
    dailyCap: 14,
  });
  const dataDir = path.join(root, 'data');

  // Day 1: balance reads until the service's daily-cap 429; the studio remembers the cap it named.
  const day1 = new Date().toISOString().slice(0, 10);
  {
    const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
    const engine = new StudioEngine({ dataDir, client, apiKey });
    let reads = 0;
    while ((await engine.spending.setAnchor()) !== null) reads++;
    expect(reads).toBe(14);
    await engine.close();
    await client.close();
  }

  // Day 2: the studio as `dropshoot studio` serves it, Settings file included.
  shiftableClock((undo) => cleanups.push(undo)).nextDay();
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const opened = await openStudio({ dataDir, client, apiKey, settleMs: 200 });
  cleanups.push(() => opened.close());
  expect(opened.engine.spending.dailyCap).toBe(500);
  const web = buildStudioWeb({
    engine: opened.engine,
    commands: opened.commands,
    settings: studioSettingsPort(dataDir, { dailyCapFromFlag: null, env: {} }),
  });
  await web.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    web.server.closeAllConnections();
    await web.close();
  });
  const address = web.server.address();
  setTransport(
    httpTransport(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`),
  );

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
