/**
 * A studio on loopback whose one photo's create was charged by the reference service and its
 * answer lost (a front cuts it), on a service that does not confirm Idempotency-Key: the photo is
 * uncertain. Shared by the board tests of uncertain photos.
 */
import { waitFor } from '@testing-library/react';
import { expect } from 'vitest';
import { HttpClient } from '../../src/client';
import { studio } from '../../src/renderer/src/transport';
import type { ItemView } from '../../src/shared/studio';
import { rewritingFront } from '../integration/helpers/rewriting-front';
import { pausedWithOnePhoto, type useStudioAgainstReference } from './studio-against-reference';

export async function uncertainPhoto(
  fixture: ReturnType<typeof useStudioAgainstReference>,
  opts: { email: string; seed: number; diamonds: number },
): Promise<{ price: number; root: string; item(): Promise<ItemView> }> {
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName: 'uncertain-photo',
    seed: opts.seed,
    account: { email: opts.email, diamonds: opts.diamonds },
  });
  const cleanups: (() => Promise<void> | void)[] = [];
  fixture.onCleanup(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  let cut = false;
  const front = await rewritingFront(cleanups, service.url, (request, answer) => {
    const create = request.method === 'POST' && request.path === '/v1/generations';
    if (!create || cut || answer.status >= 300 || !request.body.includes('garment_photo'))
      return answer;
    cut = true;
    return 'cut';
  });
  const client = new HttpClient({ baseUrl: front, apiKey, timeoutMs: 5000 });
  fixture.onCleanup(() => client.close());
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithOnePhoto(root);
  await studio().call('queue.pause', { paused: false });
  const item = async () => ((await studio().call('queue.list', {})).items as ItemView[])[0]!;
  await waitFor(async () => expect((await item()).uncertain).toBe(true));
  const charged = service.ledger(opts.email).filter((e) => e.kind === 'charge');
  expect(charged).toHaveLength(1);
  return { price: -charged[0]!.delta, root, item };
}
