// @vitest-environment jsdom
/**
 * Settings' "In use now" when the budget cannot be read: the form says so with the studio's
 * error, instead of "…" for good. A real studio on loopback with its settings file, and the
 * renderer's HTTP transport; the studio's engine is closed (its database with it) after it starts
 * serving, so `budget.get` fails while the settings file still answers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanup, configure, render, screen, waitFor } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { SettingsScreen } from '../../src/renderer/src/screens/SettingsScreen';
import { httpTransport, setTransport, studio } from '../../src/renderer/src/transport';
import { openStudio } from '../../src/studio';
import { studioSettingsPort } from '../../src/studio/host/studio-settings-file';
import { buildStudioWeb } from '../../src/studio/web';
import { startReferenceService } from '../reference-service';
import { resetStores } from './reset-stores';

configure({ asyncUtilTimeout: 15_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  cleanup();
  resetStores();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it('Settings shows why the cap in use could not be read', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-cap-error-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 4, timeScale: 0.02 });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: 'err@ref.test', diamonds: 10 });
  const dataDir = path.join(root, 'data');
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const opened = await openStudio({ dataDir, client, apiKey, settleMs: 200 });
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
  await opened.close();
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
