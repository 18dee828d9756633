/**
 * The key cache on PostgreSQL (key-cache.ts): polls cost no key lookup, yet a key revoked by
 * another process (another store on the same schema here) is refused by the first request that
 * starts more than KEY_CHECK_MS.postgres after the revoke committed; requests arriving while the
 * change marker is being read share that one read, and once half that time has passed the next
 * read goes out ahead of need, without making the request that sends it wait.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { KEY_CHECK_MS, KeyCache } from '../../src/core/key-cache';
import { createAccount, revokeKey } from '../../src/core/keys';
import { Unauthorized } from '../../src/core/errors';
import { openPostgresStore } from '../../src/core/store/pg/index';
import type { Store } from '../../src/core/store/types';
import { describePostgres } from '../support/postgres';

describePostgres('key cache on PostgreSQL', (databaseUrl) => {
  let serving: Store;
  let admin: Store;
  beforeEach(async () => {
    const schema = `keycache_${randomBytes(6).toString('hex')}`;
    serving = await openPostgresStore(databaseUrl(), { schema, max: 4 });
    admin = await openPostgresStore(databaseUrl(), { schema, max: 2 });
  });
  afterEach(async () => {
    await Promise.all([serving.close(), admin.close()]);
  });

  /** A fresh account's key, and the serving store's keys counting their change-marker reads. */
  async function countedKeys() {
    const { apiKey, keyId } = await createAccount(
      admin,
      { email: `${randomBytes(4).toString('hex')}@example.test`, diamonds: 0 },
      new Date(),
    );
    const reads = { marker: 0 };
    const counted = {
      keys: new Proxy(serving.keys, {
        get: (target, prop, receiver) =>
          prop === 'changeMarker'
            ? () => {
                reads.marker++;
                return target.changeMarker();
              }
            : (Reflect.get(target, prop, receiver) as unknown),
      }),
      dialect: serving.dialect,
    };
    return { apiKey, keyId, counted, reads };
  }

  it('refuses a key revoked by another process once KEY_CHECK_MS has passed, with one marker read per window', async () => {
    const { apiKey, keyId, counted, reads } = await countedKeys();
    const cache = new KeyCache(counted);
    const header = `Bearer ${apiKey}`;
    // Twenty requests at once: one marker read between them, all served from the cache.
    const first = await Promise.all(Array.from({ length: 20 }, () => cache.authenticate(header)));
    expect(first.every((k) => k.keyId === keyId)).toBe(true);
    expect(reads.marker).toBe(1);

    await revokeKey(admin, keyId, new Date());
    await delay(KEY_CHECK_MS.postgres + 5);
    await expect(cache.authenticate(header)).rejects.toBeInstanceOf(Unauthorized);
    expect(reads.marker).toBe(2);
  });

  it('reads the marker ahead half-way through the window: the request that sends the read is answered at once, a revoke is still refused after the window', async () => {
    const { apiKey, keyId, counted, reads } = await countedKeys();
    // A long window, so the machine's load cannot push the steps below out of it.
    const windowMs = 1_000;
    const cache = new KeyCache(counted, { checkEveryMs: windowMs });
    const header = `Bearer ${apiKey}`;
    await cache.authenticate(header);
    expect(reads.marker).toBe(1);

    // Not yet half-way: served from the cache, no read.
    await cache.authenticate(header);
    expect(reads.marker).toBe(1);
    await delay(windowMs * 0.6);
    // Half-way: the next read goes out, and this request does not wait for it.
    let answered = false;
    const ahead = cache.authenticate(header).then((k) => ((answered = true), k));
    for (let m = 0; m < 4; m++) await Promise.resolve();
    expect(answered).toBe(true);
    expect((await ahead).keyId).toBe(keyId);
    expect(reads.marker).toBe(2);

    await revokeKey(admin, keyId, new Date());
    await delay(windowMs + 20);
    await expect(cache.authenticate(header)).rejects.toBeInstanceOf(Unauthorized);
    expect(reads.marker).toBe(3);
  });
});
