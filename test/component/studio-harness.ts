/**
 * A real headless studio (embedded core, real SQLite, real HTTP on loopback) for component
 * tests: the renderer's HTTP transport talks to it exactly as in the browser.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InProcessClient } from '../../src/client/in-process';
import { openStudio } from '../../src/studio';
import { buildStudioWeb } from '../../src/studio/web';
import { httpTransport, setTransport } from '../../src/renderer/src/transport';

import { cleanup, configure } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { resetStores } from './reset-stores';

// The harness is a real studio on a machine shared with other work: wait for it, not for a clock.
configure({ asyncUtilTimeout: 15_000 });

// jsdom has no layout, hence no scrollIntoView; pickers call it to keep the choice in view.
if (typeof Element !== 'undefined')
  Element.prototype.scrollIntoView ??= function scrollIntoView() {};

export async function startHarness() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-component-'));
  const client = await InProcessClient.open({ dataDir: path.join(root, 'data', 'core') });
  const studio = await openStudio({ dataDir: path.join(root, 'data'), client, settleMs: 200 });
  const web = buildStudioWeb({ engine: studio.engine, commands: studio.commands });
  await web.listen({ host: '127.0.0.1', port: 0 });
  const address = web.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  setTransport(httpTransport(url));
  return {
    root,
    url,
    async stop() {
      // The renderer's fetches keep their connections alive; a test run has no reason to wait them out.
      web.server.closeAllConnections();
      try {
        await web.close();
        await studio.close();
        await client.close();
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

export type StudioHarness = Awaited<ReturnType<typeof startHarness>>;

/**
 * One studio for the test file (started before its tests, stopped after), every store reset
 * before each test and the rendered tree removed after it. Returns a getter for the studio.
 */
export function useStudioHarness(): () => StudioHarness {
  let harness: StudioHarness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.stop());
  beforeEach(resetStores);
  afterEach(cleanup);
  return () => {
    if (!harness) throw new Error('the studio harness is not started');
    return harness;
  };
}
