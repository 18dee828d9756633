/**
 * A create refused 402 whose words name a balance below the tool's price ('required 4, balance
 * 3') while the balance last read was far above it (another client's spend, refunded since; or a
 * stale read at the service): the run reads the balance once more before the photos it held end
 * it, and they go when it covers them (review rev15 X1: the run ended at once, 2 photos 'short of
 * diamonds' with 996 on the balance). Against the reference /v1 service through `run`'s own path;
 * the two 402s are answered by the client in front of it, so nothing was charged for them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, HttpClient } from '../../src/client';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'read-again-402@ref.test';

describe('a 402 naming a balance the last reading contradicts', () => {
  it('two creates refused 402 (required 1, balance 0 named; 100 read): read again, all 3 photos go, each paid once', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      photos: 3,
      service: { seed: 3, timeScale: 0.01, jobSeconds: [5, 10] },
    });
    let refused = 0;
    /** The service's client, the first two creates answered 402 before they are sent. */
    class Phantom402Client extends HttpClient {
      override async createGeneration(...args: Parameters<HttpClient['createGeneration']>) {
        if (refused < 2) {
          refused++;
          throw new ApiError(402, 'Insufficient diamonds: required 1, balance 0');
        }
        return super.createGeneration(...args);
      }
    }
    const summary = await runOnWorld(w, { Client: Phantom402Client });
    expect(refused).toBe(2);
    // Before: 3 photos held 'short of diamonds: ... balance 0', the run ended at once.
    expect(summary.held).toEqual([]);
    expect(summary.exported).toBe(3);
    expect(w.service.jobs(EMAIL)).toHaveLength(3);
    expect(summary.diamondsSpent).toBe(chargedTo(w.service, EMAIL));
  }, 60_000);

  it('a 402 the last reading agrees with (balance below the price): the run ends at once, no read again', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 0,
      photos: 2,
      service: { seed: 3, timeScale: 0.01, jobSeconds: [5, 10] },
    });
    const summary = await runOnWorld(w);
    expect(w.service.jobs(EMAIL)).toHaveLength(0);
    expect(summary.exported).toBe(0);
    expect(summary.held.length).toBe(2);
    for (const h of summary.held) expect(h.reason).toMatch(/short of diamonds/);
    // The opening and the closing read only.
    expect(w.service.requests().filter((r) => r.path === '/v1/account').length).toBeLessThanOrEqual(
      2,
    );
  }, 60_000);
});
