/**
 * What `run` says while it waits (review rev14 W1): after a create's answer was lost on a service
 * that holds the Idempotency-Key (a gateway 504 after the charge; the probe's other body refused
 * 422), the photo waits until the key's record must be stored before it is sent again under the
 * same key. The progress line must say that, with the time left, not "job(s) still processing";
 * and once the resend collects the job, its time is counted from the key's first send (the
 * charge), not from the resend. Against the reference /v1 service through `run`'s own path.
 */
import { afterEach, expect, it } from 'vitest';
import type { ReferenceServiceOptions } from '../reference-service';
import { referenceWorld, runToldOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'key-wait@ref.test';
/** Test-sized wait for a held key's record (the product waits 5 minutes). */
const GRACE_MS = 3_000;

/** One `run` of one photo against a service with `options`, its progress lines timed. */
async function runTold(options: ReferenceServiceOptions) {
  const world = await referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 3, timeScale: 0.01, ...options },
  });
  const { summary, lines } = await runToldOnWorld(world, {
    backoff: { baseMs: 50, maxMs: 200 },
    engine: { keyRecordGraceMs: GRACE_MS, balanceRecheckMs: 100 },
    progressEveryMs: 500,
  });
  return { summary, lines, service: world.service };
}

it("a lost create answer waiting out its key's record: the line says so, with the time left", async () => {
  // Jobs take 4.5 s from their charge: still processing a while after the resend at ~3 s.
  const { summary, lines, service } = await runTold({
    jobSeconds: [450, 450],
    honourIdempotencyKey: true,
    gatewayTimeoutFirstCreates: 1,
  });

  expect(summary).toMatchObject({ exported: 1, failed: [], uncertain: [] });
  expect(service.ledger(EMAIL).filter((e) => e.kind === 'charge')).toHaveLength(1);
  const creates = service.requests().filter((r) => r.path === '/v1/generations');
  const resentAt = creates.findIndex((r) => r.status === 202);
  expect(resentAt).toBeGreaterThan(0);

  // Before (rev14 W1): nothing said while the key waited, then "waiting for 1 job(s) still
  // processing at the service, the longest for 0 s" once the resend had collected the job.
  const keyWait = lines.filter((l) => /answer .*was lost/.test(l.line));
  expect(keyWait.length).toBeGreaterThan(0);
  for (const { line } of keyWait) {
    expect(line).toMatch(/same Idempotency-Key/);
    expect(line).toMatch(/in \d+ s\b/);
    expect(line).not.toMatch(/still processing/);
  }
  const left = keyWait.map((l) => Number(/in (\d+) s\b/.exec(l.line)![1]));
  expect(Math.max(...left)).toBeLessThanOrEqual(GRACE_MS / 1000);
  const processing = lines.filter((l) => /job\(s\) still processing/.test(l.line));
  expect(processing.length).toBeGreaterThan(0);
  for (const { line } of processing) {
    const since = Number(/the longest for (\d+) s/.exec(line)?.[1]);
    expect(since).toBeGreaterThanOrEqual(GRACE_MS / 1000);
  }
}, 60_000);

it('a create still on its way is told as awaited, not as an answer lost (review rev16 W2)', async () => {
  // The service answers the create after 2 s; nothing is lost.
  const { summary, lines } = await runTold({ jobSeconds: [100, 100], createDelayMs: 2_000 });
  expect(summary).toMatchObject({ exported: 1, failed: [], uncertain: [] });
  const awaited = lines.filter((l) => /waiting for the service to answer 1 create/.test(l.line));
  expect(awaited.length).toBeGreaterThan(0);
  // Before: "waiting on 1 photo(s) whose create got no answer to go on with (it may have been charged)".
  expect(lines.filter((l) => /no answer to go on with|was lost/.test(l.line))).toEqual([]);
}, 60_000);
