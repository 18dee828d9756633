/**
 * A studio on loopback whose first create of a garment is charged by the reference service and
 * its answer lost (a front cuts it), on a service that does not confirm Idempotency-Key: that
 * photo is uncertain. Shared by the board tests of uncertain photos.
 */
import { waitFor } from '@testing-library/react';
import { expect } from 'vitest';
import { HttpClient } from '../../src/client';
import { studio } from '../../src/renderer/src/transport';
import type { ItemView } from '../../src/shared/studio';
import { rewritingFront } from '../integration/helpers/rewriting-front';
import { pausedWithOnePhoto, type useStudioAgainstReference } from './studio-against-reference';

type Fixture = ReturnType<typeof useStudioAgainstReference>;
type Account = { email: string; seed: number; diamonds: number };

/** The studio served on an account of the reference service behind the front: its folder and service. */
export async function studioLosingFirstCreateAnswer(fixture: Fixture, opts: Account) {
  const world = await fixture.referenceAccount({
    tmpName: 'uncertain-photo',
    seed: opts.seed,
    account: { email: opts.email, diamonds: opts.diamonds },
  });
  const cleanups: (() => Promise<void> | void)[] = [];
  fixture.onCleanup(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  let cut = false;
  const front = await rewritingFront(cleanups, world.service.url, (request, answer) => {
    const create = request.method === 'POST' && request.path === '/v1/generations';
    if (!create || cut || answer.status >= 300 || !request.body.includes('garment_photo'))
      return answer;
    cut = true;
    return 'cut';
  });
  const client = new HttpClient({ baseUrl: front, apiKey: world.apiKey, timeoutMs: 5000 });
  fixture.onCleanup(() => client.close());
  await fixture.serveStudio({ dataDir: world.dataDir, client, apiKey: world.apiKey });
  return world;
}

/** Its one photo sent: uncertain, charged once. Its price, the studio's folder, its item, the charges. */
export async function uncertainPhoto(fixture: Fixture, opts: Account) {
  const { root, service } = await studioLosingFirstCreateAnswer(fixture, opts);
  await pausedWithOnePhoto(root);
  await studio().call('queue.pause', { paused: false });
  const item = async () => ((await studio().call('queue.list', {})).items as ItemView[])[0]!;
  await waitFor(async () => expect((await item()).uncertain).toBe(true));
  const charges = () => service.ledger(opts.email).filter((e) => e.kind === 'charge');
  expect(charges()).toHaveLength(1);
  return { price: -charges()[0]!.delta, root, item, charges };
}
