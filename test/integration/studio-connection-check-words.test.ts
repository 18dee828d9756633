/**
 * Settings' Check of another service (`connection.check`): a service that answers is quoted as
 * having answered; one that cannot be reached is not ("… answered: … could not be reached" said
 * both), and the transport's code comes after what it means for the operator.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { openStudio } from '../../src/studio';
import { closedPort } from './helpers/closed-port';
import { referenceWorld } from './helpers/reference-studio';
import { call } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('Settings: checking another service', () => {
  it('says a closed port could not be reached, in words, and quotes a service that refuses the key', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'connection-check@example.com',
      diamonds: 10,
      service: { seed: 2, timeScale: 0.01 },
    });
    const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey });
    const studio = await openStudio({
      dataDir: path.join(w.root, 'studio'),
      client,
      apiKey: w.apiKey,
    });
    cleanups.push(async () => {
      await studio.close();
      await client.close();
    });
    const closed = `http://127.0.0.1:${await closedPort()}`;
    const unreachable = call(studio, 'connection.check', {
      baseUrl: closed,
      apiKey: 'ds_live_0000',
    });
    await expect(unreachable).rejects.toThrow(
      `connection.check: connection_failed: the service at ${closed} could not be reached: nothing answers at that address (connect ECONNREFUSED`,
    );
    await expect(unreachable).rejects.not.toThrow(/answered/);

    const refused = call(studio, 'connection.check', {
      baseUrl: w.service.url,
      apiKey: 'ds_live_wrong_key',
    });
    await expect(refused).rejects.toThrow(
      new RegExp(`^connection.check: connection_failed: ${w.service.url} answered: `),
    );
  });
});
