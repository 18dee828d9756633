// @vitest-environment jsdom
/**
 * A plan in billing_issue refusing every create 402 while the balance covers the photo (spec 2.9
 * lists the plan states; review rev31 D4). The desktop studio's own balance re-read opened the
 * diamonds gate on the balance alone: a refused create and a read every ~11 s (~650 requests an
 * hour against a cap of 500 a day), the photo's words 'short of diamonds' (the plan was never
 * read there), the board's 'Not enough diamonds'. Reference service (written from the spec
 * alone) with `planStatus`, behind a proxy counting the creates.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { startReferenceService } from '../reference-service';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('a photo held by the plan, not the diamonds: sent once, and the board says it is the plan', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-plan-refusing-'));
  fixture.onCleanup(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({
    seed: 17,
    timeScale: 0.02,
    planStatus: 'billing_issue',
  });
  fixture.onCleanup(() => service.close());
  const { apiKey } = service.createAccount({ email: 'plan-refusing@ref.test', diamonds: 100 });
  let creates = 0;
  const proxy = await startFaultProxy({
    target: service.url,
    choose: (method, p) => {
      if (method === 'POST' && p === '/v1/generations') creates++;
      return null;
    },
  });
  fixture.onCleanup(() => proxy.close());
  const client = new HttpClient({ baseUrl: proxy.url, apiKey, timeoutMs: 5000 });
  fixture.onCleanup(() => client.close());
  await fixture.serveStudio({ dataDir: path.join(root, 'data'), client, apiKey });
  await pausedWithPhotos(root, ['p1.jpg']);
  await studio().call('queue.pause', { paused: false });
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(async () => expect((await items())[0]?.waitReason).toBe('no_diamonds'), {
    timeout: 30_000,
  });
  // Left alone past two of the gate's first re-reads (10 s, then 20 s).
  await new Promise((r) => setTimeout(r, 25_000));
  // Before: refused again at each re-read (3 creates in these 25 s and more).
  expect(creates).toBe(1);
  const [item] = await items();
  expect(item!.error).toMatch(/the account's plan is billing_issue/);

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  const board = render(<BatchBoard />);
  const row = within(screen.getByRole('table', { name: 'Photos' }))
    .getByText('p1.jpg')
    .closest('tr')!;
  expect(row.textContent).toMatch(/plan is billing_issue\. Adding diamonds will not help/);
  expect(row.textContent).not.toMatch(/Not enough diamonds/);
  board.unmount();
  // The folder's card: before, '1 held: short of diamonds (top up to go on)'.
  render(<FoldersScreen />);
  expect(screen.getByTestId('folder-held').textContent).toBe(
    '1 held: refused by the account’s plan, not for diamonds (settle the plan with the service)',
  );
}, 120_000);
