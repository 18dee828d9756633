// @vitest-environment jsdom
/**
 * Photos held while the service refuses to show paid jobs ('jobs_hidden': hidden-jobs.ts) were
 * never sent, like those held short of diamonds (51228e6): they read 'queued' under Waiting, not
 * 'uploading' or 'submitting' (review rev31 U1). Reference service behind a fault proxy refusing
 * every poll 403; uploads after the first two are turned away 503 (nothing charged) until two
 * polls are refused, so photos are still to be sent when the gate closes.
 */
import { render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { studio } from '../../src/renderer/src/transport';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();

it('photos held while the service hides paid jobs read queued', async () => {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: 'jobs-hidden-board',
    seed: 33,
    account: { email: 'jobs-hidden-board@ref.test', diamonds: 100 },
  });
  let refused = 0;
  let uploads = 0;
  const proxy = await startFaultProxy({
    target: service.url,
    choose: (method, p) => {
      if (method === 'POST' && p === '/v1/uploads') {
        if (refused < 2 && uploads >= 2) return 'unavailable503';
        uploads++;
      }
      if (method === 'GET' && p.startsWith('/v1/generations/')) {
        refused++;
        return 'planPaused403';
      }
      return null;
    },
  });
  fixture.onCleanup(() => proxy.close());
  const client = new HttpClient({ baseUrl: proxy.url, apiKey, timeoutMs: 5000 });
  fixture.onCleanup(() => client.close());
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithPhotos(root, ['p1.jpg', 'p2.jpg', 'p3.jpg']);
  await studio().call('queue.pause', { paused: false });
  const items = async () => (await studio().call('queue.list', {})).items;
  await waitFor(
    async () => {
      expect((await items()).filter((i) => i.waitReason === 'jobs_hidden')).toHaveLength(1);
    },
    { timeout: 30_000 },
  );
  const held = (await items()).filter((i) => i.waitReason === 'jobs_hidden');

  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  render(<BatchBoard />);
  const photos = screen.getByRole('table', { name: 'Photos' });
  const rowOf = (name: string) => within(photos).getByText(name).closest('tr')!;
  // Before: 'uploading', as if a step were under way.
  for (const item of held) {
    expect(rowOf(item.name).querySelector('.state')?.textContent).toBe('queued');
    expect(rowOf(item.name).textContent).toMatch(/the service refuses to show paid jobs/);
  }
}, 60_000);
