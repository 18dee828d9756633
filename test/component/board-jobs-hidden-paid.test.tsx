// @vitest-environment jsdom
/**
 * Paid photos whose polls wait on the service's hidden-jobs gate (hidden-jobs.ts: polls refused
 * 403, a plan paused) read "Service error: retrying with backoff", a generic error, on the board
 * and counted as moving: their results are paid for and are collected once the account is settled.
 * They now say so, and the folder's hold line counts them. Reference service behind a fault proxy
 * refusing every poll 403.
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

it('paid photos waiting on the hidden-jobs gate say they are paid and how they are collected', async () => {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName: 'jobs-hidden-paid',
    seed: 34,
    account: { email: 'jobs-hidden-paid@ref.test', diamonds: 100 },
  });
  const proxy = await startFaultProxy({
    target: service.url,
    choose: (method, p) =>
      method === 'GET' && p.startsWith('/v1/generations/') ? 'planPaused403' : null,
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
      const paid = (await items()).filter((i) => i.jobId && i.waitReason === 'service_error');
      expect(paid.length).toBeGreaterThanOrEqual(2);
    },
    { timeout: 30_000 },
  );
  await Promise.all([useQueue.getState().load(), useFolders.getState().load()]);
  // What the board was given: the gate goes on probing, the rows it renders are these.
  const paid = Object.values(useQueue.getState().items).filter(
    (i) => i.jobId && i.waitReason === 'service_error',
  );
  render(<BatchBoard />);
  const photos = screen.getByRole('table', { name: 'Photos' });
  for (const item of paid) {
    const row = within(photos).getByText(item.name).closest('tr')!;
    // Before: 'Service error: retrying with backoff.'
    expect(row.textContent).not.toMatch(/Service error/);
    expect(row.textContent).toMatch(/Paid for: the service refuses to show paid jobs/);
    expect(row.textContent).toMatch(/Settle the account/);
  }
  // Counted as held for the gate, not as moving with an ETA.
  const batches = screen.getByRole('table', { name: 'Batches' });
  expect(batches.textContent).toMatch(
    new RegExp(`${paid.length} held: paid for, the service refuses to show them`),
  );
}, 60_000);
