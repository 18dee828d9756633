/**
 * `--daily-cap N` reaches the studio engine from the `studio` command and from the desktop's
 * engine process (EngineStart.dailyCap through openStudioHost): the budget it shows and plans with.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineStartSchema } from '../../src/shared/engine-process';
import { openStudioHost } from '../../src/studio/host/open-host';
import { startReferenceService } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('daily cap for the studio', () => {
  it('EngineStart.dailyCap is the cap the engine counts against, per key', async () => {
    const service = await startReferenceService({ seed: 2, timeScale: 0.01 });
    cleanups.push(() => service.close());
    const { apiKey } = service.createAccount({ email: 'cap@example.com', diamonds: 10 });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-cap-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const config = EngineStartSchema.parse({
      dataDir,
      service: { mode: 'remote', baseUrl: service.url, apiKey },
      dailyCap: 42,
    });
    const host = await openStudioHost(config, () => undefined);
    cleanups.push(() => host.close());
    const budget = await host.studio.engine.budget();
    expect(budget).toMatchObject({ dailyCap: 42, mode: 'remote' });
    // The balance read was counted against today's 42, under this key.
    expect(budget.requestsUsedToday).toBeGreaterThanOrEqual(1);
    const spending = host.studio.engine.spending;
    expect(spending.requestsLeftToday()).toBe(42 - spending.requestsUsedToday());
    expect(host.studio.engine.spending.key).toMatch(/#[0-9a-f]{12}$/);
  }, 60_000);

  it('refuses a cap below 1', () => {
    expect(
      EngineStartSchema.safeParse({ dataDir: '/tmp/x', service: { mode: 'embedded' }, dailyCap: 0 })
        .success,
    ).toBe(false);
  });
});
