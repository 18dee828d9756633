// @vitest-environment jsdom
/**
 * The board's "Diamonds left" says when the balance was read when the studio answered from an
 * older read (here: a day closed at the studio's own cap, where a read would be refused).
 * Against the reference /v1 service (written from the spec alone), a real studio on loopback and
 * the renderer's HTTP transport; the process's clock (studio and board alike) is moved a minute on
 * past the read.
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

/** Moves the process's clock on by `ms` (every `new Date()` and `Date.now()`), undone after the test. */
function moveClockOn(ms: number): void {
  const Real = globalThis.Date;
  class Shifted extends Real {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(Real.now() + ms);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return Real.now() + ms;
    }
  }
  globalThis.Date = Shifted as DateConstructor;
  cleanups.push(() => {
    globalThis.Date = Real;
  });
}

const recipe: Recipe = {
  request: {
    toolId: 'virtual_model',
    images: { fashion_model: 'person-001', garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};

it('Diamonds left says when the balance was read once it is answered from an older read', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-balance-read-at-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 8, timeScale: 0.02 });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: 'asof@ref.test', diamonds: 77, dailyCap: 50 });
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const opened = await openStudio({
    dailyCap: 12,
    dataDir: path.join(root, 'data'),
    client,
    apiKey,
    settleMs: 200,
  });
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

  // Just read: the balance alone.
  await useQueue.getState().load();
  const readAt = useQueue.getState().budget?.diamondBalanceReadAt;
  expect(readAt).toBeTruthy();
  render(<BatchBoard />);
  const stats = () => screen.getByRole('group', { name: 'Budget' }).textContent;
  await waitFor(() => expect(stats()).toContain('Diamonds left77'));
  expect(stats()).not.toContain('as of');
  cleanup();

  // Other reads (the closing balance reads of runs, say) take the day's requests to the studio's
  // cap: the day is closed, a read now would be refused.
  while (!opened.engine.dayClosed()) await opened.engine.spending.setAnchor();

  // A minute on, the board's read is answered from the last read, and says when that was.
  moveClockOn(60_000);
  await useQueue.getState().load();
  expect(useQueue.getState().budget?.diamondBalanceReadAt).toBe(readAt);
  render(<BatchBoard />);
  await waitFor(() =>
    expect(stats()).toContain(`Diamonds left77 (as of ${readAt!.slice(11, 16)} UTC)`),
  );
});
