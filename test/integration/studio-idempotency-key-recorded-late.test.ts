/**
 * A create slower than the client's own wait, on a service that keeps Idempotency-Keys but
 * records a key (and charges) only when its create is done, with no 409 for a key in flight
 * (review rev17 S2). The client gives up, probes the key at once: not recorded yet, the probe's
 * body is refused (400). Taken as final, the run concluded "this service does not confirm
 * Idempotency-Key" and left the paid photo uncertain for good, never asking again. A key unknown
 * right after our own timeout is asked again once its record must be written: the resend then
 * collects the paid job, at no new charge. The studio (HttpClient, StudioEngine, runBatch, the
 * real SQLite store) against the reference /v1 service behind a loopback front that delays creates.
 */
import { afterEach, expect, it } from 'vitest';
import { HttpClient, type HttpClientOptions } from '../../src/client/http';
import { netSpent as netSpentOf, ON_MODEL } from './helpers/price-reading-studio';
import { referenceWorld, runOnWorld } from './helpers/reference-studio';
import { rewritingFront } from './helpers/rewriting-front';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'key-recorded-late@ref.test';
/** The client's request timeout; a create is waited for 3 times as long (http.ts WRITE_WAIT). */
const TIMEOUT_MS = 500;
/** How late a create reaches the service (its key recorded, its charge made), past the client's wait. */
const CREATE_LATE_MS = 2_500;
/** Test-sized wait for a key's record (the product waits 5 minutes). */
const GRACE_MS = 4_000;

/** The studio's client with a short request timeout. */
class ImpatientClient extends HttpClient {
  constructor(opts: HttpClientOptions) {
    super({ ...opts, timeoutMs: TIMEOUT_MS });
  }
}

/**
 * A front that holds the first send of each create's key with a real body for `lateMs` before
 * passing it on (the service records its key and charges then), and everything else at once (the
 * studio's key probes, whose body the service refuses; a resend, answered from the key's record).
 */
function delayCreates(target: string, lateMs: number): Promise<string> {
  const sent = new Set<string>();
  return rewritingFront(cleanups, target, (_request, answer) => answer, {
    holdMs: ({ method, path, headers, body }) => {
      const key = headers['idempotency-key'];
      if (method !== 'POST' || path !== '/v1/generations' || typeof key !== 'string') return 0;
      if (sent.has(key) || body.toString('utf8').includes('dropshoot-key-probe')) return 0;
      sent.add(key);
      return lateMs;
    },
  });
}

it('a key unknown right after our own timeout is asked again after the record wait: the paid job is collected, not left uncertain', async () => {
  const w = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    photos: 2,
    service: { seed: 5, timeScale: 0.01, honourIdempotencyKey: true },
  });
  const baseUrl = await delayCreates(w.service.url, CREATE_LATE_MS);
  const summary = await runOnWorld(w, {
    recipe: ON_MODEL,
    baseUrl,
    Client: ImpatientClient,
    backoff: { baseMs: 50, maxMs: 200 },
    engine: { keyRecordGraceMs: GRACE_MS, balanceRecheckMs: 100 },
  });
  // Before: 0 exported, 2 uncertain ("this service does not confirm Idempotency-Key"), 8 charged.
  expect(summary.uncertain).toEqual([]);
  expect(summary.exported).toBe(2);
  // Each photo charged once: the resend under its key got the stored answer.
  expect(netSpentOf(w, EMAIL)).toBe(8);
  expect(summary.diamondsSpent).toBe(8);
}, 120_000);
