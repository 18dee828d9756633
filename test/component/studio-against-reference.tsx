/**
 * Set-up shared by the component tests that run a real studio against the reference /v1 service
 * (written from the spec alone): the service with one account, a day on which the studio learns
 * the service's cap from its 429, the studio on loopback behind its web server with the
 * renderer's HTTP transport pointed at it, and a paused queue holding one photo. Whatever a test
 * sets up here is undone after it, last first.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { cleanup, configure, render, waitFor } from '@testing-library/react';
import { afterEach, expect } from 'vitest';
import { HttpClient } from '../../src/client';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { httpTransport, setTransport, studio } from '../../src/renderer/src/transport';
import type { Recipe } from '../../src/shared/studio';
import { openStudio } from '../../src/studio';
import { StudioEngine } from '../../src/studio/engine';
import { studioSettingsPort } from '../../src/studio/host/studio-settings-file';
import { buildStudioWeb } from '../../src/studio/web';
import { shiftableClock } from '../integration/helpers/studio-fixtures';
import { startReferenceService, type ReferenceService } from '../reference-service';
import { resetStores } from './reset-stores';

// A real studio and service on a machine shared with other work: wait for them, not for a clock.
configure({ asyncUtilTimeout: 15_000 });

/** A virtual-model recipe: one photo in, one request, an exported JPEG out. */
export const VIRTUAL_MODEL_RECIPE: Recipe = {
  request: {
    toolId: 'virtual_model',
    images: { fashion_model: 'person-001', garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};

type Account = { email: string; diamonds: number; dailyCap?: number };

/**
 * Registers, for the calling test file, the clean-up after each test (rendered tree, renderer
 * stores, then what the test set up through the returned functions, last first) and returns them.
 */
export function useStudioAgainstReference() {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    cleanup();
    resetStores();
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  const onCleanup = (fn: () => Promise<void> | void): void => {
    cleanups.push(fn);
  };

  return {
    onCleanup,

    /**
     * A fresh temporary folder (`root`, with the studio's `dataDir` in it) and a reference service
     * (seeded with `seed`) holding one account.
     */
    async referenceAccount(opts: { tmpName: string; seed: number; account: Account }) {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-${opts.tmpName}-`));
      onCleanup(() => fs.rmSync(root, { recursive: true, force: true }));
      const service = await startReferenceService({ seed: opts.seed, timeScale: 0.02 });
      onCleanup(() => service.close());
      const { apiKey } = service.createAccount(opts.account);
      return { root, dataDir: path.join(root, 'data'), service, apiKey };
    },

    /** The process's clock (service and studio alike), moved on only when the test says so. */
    clock: () => shiftableClock(onCleanup),

    /** An HTTP client of the service for `apiKey`, closed after the test. */
    serviceClient(service: ReferenceService, apiKey: string): HttpClient {
      const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
      onCleanup(() => client.close());
      return client;
    },

    /**
     * A studio on `dataDir` behind its web server on loopback, the renderer's transport pointed at
     * it; with `settingsFile`, Settings are served from the studio's settings file as `dropshoot
     * studio` does. `closeStudio` closes the studio alone (the web server keeps answering);
     * `close` closes both. Either runs once, and whatever is still open closes after the test.
     */
    async serveStudio(opts: {
      dataDir: string;
      client: HttpClient;
      apiKey: string;
      dailyCap?: number;
      settingsFile?: boolean;
    }) {
      const { settingsFile, ...studioOptions } = opts;
      const opened = await openStudio({ ...studioOptions, settleMs: 200 });
      const web = buildStudioWeb({
        engine: opened.engine,
        commands: opened.commands,
        ...(settingsFile
          ? { settings: studioSettingsPort(opts.dataDir, { dailyCapFromFlag: null, env: {} }) }
          : {}),
      });
      await web.listen({ host: '127.0.0.1', port: 0 });
      const closeStudio = once(() => opened.close());
      const close = once(async () => {
        // The renderer's fetches keep their connections alive; a test has no reason to wait them out.
        web.server.closeAllConnections();
        await web.close();
        await closeStudio();
      });
      onCleanup(close);
      const address = web.server.address();
      setTransport(
        httpTransport(
          `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
        ),
      );
      return { engine: opened.engine, closeStudio, close };
    },
  };
}

/**
 * Today, a studio engine on `dataDir` reads the balance until the service's daily-cap 429, and
 * so remembers the cap the 429 named. Returns the day, how many reads were answered, and the cap
 * the studio was configured with.
 */
export async function learnServiceCap(
  service: ReferenceService,
  apiKey: string,
  dataDir: string,
): Promise<{ day: string; reads: number; configuredCap: number | null }> {
  const day = new Date().toISOString().slice(0, 10);
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({ dataDir, client, apiKey });
  let reads = 0;
  while ((await engine.spending.setAnchor()) !== null) reads++;
  const configuredCap = engine.spending.dailyCap;
  await engine.close();
  await client.close();
  return { day, reads, configuredCap };
}

/**
 * Pauses the served studio's queue, adds a hot folder (`root`/hot, with the virtual-model recipe)
 * and puts photos of these names in it (each its own colour); returns once they are queued.
 */
export async function pausedWithPhotos(root: string, names = ['p1.jpg']): Promise<void> {
  await studio().call('queue.pause', { paused: true });
  const hot = path.join(root, 'hot');
  fs.mkdirSync(hot);
  await studio().call('folders.add', {
    path: hot,
    outputDir: `${hot}-export`,
    recipe: VIRTUAL_MODEL_RECIPE,
  });
  const colours = ['#4b7a9c', '#9c4b7a', '#7a9c4b'];
  for (const [i, name] of names.entries())
    await sharp({ create: { width: 320, height: 400, channels: 3, background: colours[i % 3]! } })
      .jpeg()
      .toFile(path.join(hot, name));
  await waitFor(async () =>
    expect((await studio().call('queue.list', {})).items).toHaveLength(names.length),
  );
}

/** One photo, p1.jpg: `pausedWithPhotos`. */
export const pausedWithOnePhoto = (root: string) => pausedWithPhotos(root);

/** The board rendered with the queue loaded; returns its one photo's row. */
export async function boardRow(): Promise<Element> {
  render(<BatchBoard />);
  await useQueue.getState().load();
  return waitFor(() => {
    const tr = document.querySelector('tr[data-item]');
    expect(tr).not.toBeNull();
    return tr!;
  });
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}

/**
 * A studio on `account` (6 diamonds) with three photos at 4 (virtual_model) unpaused, once the
 * first is in review and the other two are held short of diamonds at "submitting" (their create
 * refused 402, nothing paid). Returns the service and a reader of the queue.
 */
export async function twoHeldShortOfDiamonds(
  fixture: ReturnType<typeof useStudioAgainstReference>,
  opts: { tmpName: string; seed: number; email: string },
) {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: opts.tmpName,
    seed: opts.seed,
    account: { email: opts.email, diamonds: 6 },
  });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithPhotos(root, ['p1.jpg', 'p2.jpg', 'p3.jpg']);
  await studio().call('queue.pause', { paused: false });
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(
    async () => {
      const all = await items();
      expect(all.filter((i) => i.state === 'review')).toHaveLength(1);
      expect(
        all.filter((i) => i.waitReason === 'no_diamonds' && i.state === 'submitting'),
      ).toHaveLength(2);
    },
    { timeout: 30_000 },
  );
  return { service, items };
}
