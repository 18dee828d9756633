/**
 * Result files under the service's own /v1 that answer a redirect (review rev33 D4), against the
 * reference /v1 service (written from the spec alone: every /v1 call counts against the key's
 * daily cap, spec §8). A file redirecting to itself burnt the day's 500 requests in one run of 4
 * photos (fetch followed 20 hops per try, uncounted, 6 tries each); now the loop is named, the
 * paid photos are held for a later run (not paid again), and the studio counts what the service
 * counted. A single hop to another host (a CDN) is still collected, without the key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OWN_FILE_REDIRECTS } from '../../src/client/http';
import { RESULTS_HELD } from '../../src/studio/result-download';
import {
  chargedTo,
  referenceWorld,
  runToldOnWorld,
  type ReferenceWorld,
} from './helpers/reference-studio';
import type { ReferenceServiceOptions } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'redirects@example.com';

// Jobs of 0.2 s: done at the first poll.
const world = (options: ReferenceServiceOptions, photos: number) =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    photos,
    service: {
      seed: 7,
      timeScale: 0.01,
      jobSeconds: [20, 20],
      resultUrlsNeedKey: true,
      ...options,
    },
  });

const run = (w: ReferenceWorld) => runToldOnWorld(w, { backoffMs: 20 });

/** Requests for result files under the service's /v1 (each one counted against the cap). */
const v1Files = (w: ReferenceWorld) =>
  w.service.requests().filter((r) => r.path.startsWith('/v1/files/'));

const creates = (w: ReferenceWorld) =>
  w.service.requests().filter((r) => r.method === 'POST' && r.path === '/v1/generations').length;

describe('result files under /v1 that redirect', () => {
  it('a file redirecting to itself is refused as a loop: few requests, the paid photos held, counted as the service counts', async () => {
    const photos = 4;
    const w = await world({ resultFilesRedirect: 'self' }, photos);
    const first = await run(w);
    // A few /v1 requests per photo, not the day's cap (before: 500 counted, 486 of them hops).
    expect(v1Files(w).length).toBeLessThanOrEqual(3 * photos);
    expect(w.service.requestsToday(w.apiKey)).toBeLessThan(100);
    // Paid once each, nothing exported: held for a later run with their jobs, never failed.
    expect(first.summary.exported).toBe(0);
    expect(first.summary.failed).toEqual([]);
    expect(first.summary.held).toHaveLength(photos);
    expect(first.summary.diamondsSpent).toBe(chargedTo(w.service, EMAIL));
    expect(chargedTo(w.service, EMAIL)).toBe(photos);
    for (const item of first.items) {
      expect(item.jobId).toBeTruthy();
      expect(item.error).toContain(RESULTS_HELD);
      expect(item.error).toMatch(/redirect loop/);
    }
    // The studio's count of the day's requests is the service's.
    expect(first.summary.apiRequests).toBe(w.service.requestsToday(w.apiKey));

    // A later run asks the same jobs again (bounded again) and pays nothing.
    const before = v1Files(w).length;
    const second = await run(w);
    expect(second.summary.diamondsSpent).toBe(0);
    expect(second.summary.held).toHaveLength(photos);
    expect(creates(w)).toBe(photos);
    expect(chargedTo(w.service, EMAIL)).toBe(photos);
    expect(v1Files(w).length - before).toBeLessThanOrEqual(3 * photos);
  });

  it('a file redirecting under /v1 is collected, each hop counted as the service counts it', async () => {
    const w = await world({ resultFilesRedirect: 'v1Once' }, 2);
    const { summary } = await run(w);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(2);
    expect(chargedTo(w.service, EMAIL)).toBe(2);
    expect(
      v1Files(w)
        .map((r) => r.status)
        .sort(),
    ).toEqual([200, 200, 302, 302]);
    expect(v1Files(w).every((r) => r.authorization)).toBe(true);
    // Before: the product counted 1 per file where the service counted 2 (its plan ran short).
    expect(summary.apiRequests).toBe(w.service.requestsToday(w.apiKey));
  });

  it('a file redirected under /v1 without end (no URL met twice) stops after a few hops, counted', async () => {
    const photos = 2;
    const w = await world({ resultFilesRedirect: 'v1Endless' }, photos);
    const { summary, items } = await run(w);
    // The file's URL and OWN_FILE_REDIRECTS hops, once in the run (not 21 per try, 6 tries).
    expect(v1Files(w)).toHaveLength(photos * (1 + OWN_FILE_REDIRECTS));
    expect(summary.held).toHaveLength(photos);
    expect(chargedTo(w.service, EMAIL)).toBe(photos);
    for (const item of items) expect(item.error).toMatch(/still redirected/);
    expect(summary.apiRequests).toBe(w.service.requestsToday(w.apiKey));
  });

  it('a file redirecting once to another host is collected, the key kept off that host, counted as the service counts', async () => {
    const w = await world({ resultFilesRedirect: 'otherHost' }, 2);
    const { summary } = await run(w);
    expect(summary.failed).toEqual([]);
    expect(summary.held).toEqual([]);
    expect(summary.exported).toBe(2);
    expect(chargedTo(w.service, EMAIL)).toBe(2);
    expect(v1Files(w).map((r) => r.status)).toEqual([302, 302]);
    const cdn = w.service.requests().filter((r) => r.path.startsWith('/blob/'));
    expect(cdn.map((r) => r.status)).toEqual([200, 200]);
    expect(cdn.some((r) => r.authorization)).toBe(false);
    expect(summary.apiRequests).toBe(w.service.requestsToday(w.apiKey));
  });
});
