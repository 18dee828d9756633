// @vitest-environment jsdom
/**
 * Two sentences that read as contradictions (review uirev C7). Settings on the embedded service
 * showed "500" in the daily-cap field beside "In use now: no cap": it now says why no cap is in use
 * there and when the 500 applies. A photo held by its folder's ceiling said "ceiling is reached"
 * at 40 of 42 spent: it now says the next photo would cross the ceiling, naming it. A real
 * headless studio on the embedded core, served as `dropshoot studio` serves it (settings file).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { InProcessClient } from '../../src/client/in-process';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { SettingsScreen } from '../../src/renderer/src/screens/SettingsScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { httpTransport, setTransport, studio } from '../../src/renderer/src/transport';
import type { ItemView } from '../../src/shared/studio';
import { openStudio } from '../../src/studio';
import { studioSettingsPort } from '../../src/studio/host/studio-settings-file';
import { buildStudioWeb } from '../../src/studio/web';
import { resetStores } from './reset-stores';
import { watchedFolder } from './watched-folder';
import './studio-harness';

let root = '';
let stop: () => Promise<void> = async () => undefined;
beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-embedded-words-'));
  const dataDir = path.join(root, 'data');
  const client = await InProcessClient.open({ dataDir: path.join(dataDir, 'core') });
  const opened = await openStudio({ dataDir, client, settleMs: 200 });
  const web = buildStudioWeb({
    engine: opened.engine,
    commands: opened.commands,
    settings: studioSettingsPort(dataDir, { dailyCapFromFlag: null, env: {} }),
  });
  await web.listen({ host: '127.0.0.1', port: 0 });
  const address = web.server.address();
  setTransport(
    httpTransport(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`),
  );
  stop = async () => {
    web.server.closeAllConnections();
    await web.close();
    await opened.close();
    await client.close();
    fs.rmSync(root, { recursive: true, force: true });
  };
});
afterAll(() => stop());
afterEach(() => {
  cleanup();
  resetStores();
});

it('says why no cap is in use on the embedded service beside the cap field', async () => {
  render(<SettingsScreen />);
  const inUse = await screen.findByTestId('daily-cap-in-use');
  await waitFor(() => expect(inUse.textContent).toBe('no cap'));
  const field = screen.getByRole('textbox', { name: 'Requests a day (daily cap)' });
  expect((field as HTMLInputElement).value).toBe('500');
  // Before: "In use now: no cap." and nothing more, beside 500.
  expect(inUse.parentElement!.textContent).toMatch(
    /In use now: no cap: the embedded service \(this computer\) sends no request over the network, so none is counted; the cap above \(500\) is used when the studio works with a remote service\./,
  );
});

it('says a photo held by the ceiling is held because the next one would cross it', async () => {
  const hot = await watchedFolder(root, 'hot', { maxDiamonds: 1 });
  for (const [i, colour] of ['#4b7a9c', '#9c4b7a'].entries())
    await sharp({ create: { width: 320, height: 400, channels: 3, background: colour } })
      .jpeg()
      .toFile(path.join(hot, `p${i}.jpg`));
  await waitFor(async () => {
    const items = (await studio().call('queue.list', {})).items as ItemView[];
    expect(items.filter((i) => i.waitReason === 'ceiling')).toHaveLength(1);
  });
  await useFolders.getState().load();
  render(<BatchBoard />);
  await useQueue.getState().load();
  const held = await waitFor(() => {
    const row = document.querySelector('tr[data-state="queued"]');
    expect(row).not.toBeNull();
    return row!;
  });
  // Before: "The folder’s diamond ceiling is reached: raise it to go on."
  expect(held.textContent).toContain(
    'The next photo would cross the folder’s diamond ceiling of 1: raise it to go on.',
  );
  expect(held.textContent).not.toContain('is reached');
});
