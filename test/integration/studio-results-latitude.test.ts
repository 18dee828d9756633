/**
 * Result URLs as a spec-following service may hand them out (the spec says only "URLs": nothing on
 * lifetime, auth or form), against the reference /v1 service (written from the spec alone): signed
 * URLs that expire, URLs on the service's origin behind the key, and paths relative to the service.
 * Each paid result is collected with one charge; a dead URL is replaced by polling the job again.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { FRESH_URL_POLLS_PER_DAY } from '../../src/studio/result-download';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';
import type { ReferenceServiceOptions } from '../reference-service';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'latitude@example.com';

type World = ReferenceWorld;

// Jobs of 0.2 s: done at the first poll.
const world = (options: ReferenceServiceOptions, photos = 1) =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    photos,
    service: { seed: 5, timeScale: 0.01, jobSeconds: [20, 20], ...options },
  });

const run = (w: World, backoffMs = 50, Client: typeof HttpClient = HttpClient) =>
  runOnWorld(w, { backoffMs, Client });

/** A download that sets out 5 ms late (a slow link): a 1 ms URL is then always past its time. */
class LateDownloads extends HttpClient {
  override async download(url: string) {
    await new Promise((r) => setTimeout(r, 5));
    return super.download(url);
  }
}

const polls = (w: World) =>
  w.service.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/'))
    .length;
const creates = (w: World) =>
  w.service.requests().filter((r) => r.method === 'POST' && r.path === '/v1/generations').length;

describe('result URLs that expire', () => {
  it('a URL that expired while the CDN answered 503 is replaced by polling the job again: collected, charged once', async () => {
    // The first two downloads answer 503; the backoff between them outlives the 300 ms URL.
    const w = await world({ resultUrlTtlMs: 300, resultFailFirst: 2 });
    const summary = await run(w, 400);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(fs.existsSync(summary.files[0]!)).toBe(true);
    expect(creates(w)).toBe(1);
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
    expect(summary.diamondsSpent).toBe(w.service.jobs(EMAIL)[0]!.charged);
    // An expired URL was refused (403) and a fresh one served.
    const downloads = w.service.resultRequests().map((r) => r.status);
    expect(downloads).toContain(403);
    expect(downloads.at(-1)).toBe(200);
  });

  it('asks for fresh URLs a few times a day at most, and never submits again', async () => {
    // Every URL is dead by the time it is fetched.
    const w = await world({ resultUrlTtlMs: 1 });
    const first = await run(w, 50, LateDownloads);
    // Paid, its results not collected: held for the next run, not failed (review rev15 F3).
    expect(first.failed).toEqual([]);
    expect(first.held).toHaveLength(1);
    // The polls that saw the job done, then the first run's one fresh-URL poll.
    const deliveredAfter = polls(w) - 1;
    // The next runs collect the same job: fresh URLs only while today's allowance lasts.
    for (let i = 0; i < FRESH_URL_POLLS_PER_DAY + 1; i++) {
      const again = await run(w, 50, LateDownloads);
      expect(again.held).toHaveLength(1);
      expect(again.diamondsSpent).toBe(0);
    }
    expect(creates(w)).toBe(1);
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
    expect(polls(w)).toBe(deliveredAfter + FRESH_URL_POLLS_PER_DAY);
  });
});

describe('result URLs on the service itself', () => {
  it('sends the key to result URLs on its own origin that need it: collected', async () => {
    const w = await world({ resultUrlsNeedKey: true });
    const summary = await run(w);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(creates(w)).toBe(1);
    expect(w.service.resultRequests().every((r) => r.authorization)).toBe(true);
    // Downloads under the service's /v1 are API requests: the studio counts what the service counts.
    expect(summary.apiRequests).toBe(w.service.requestsToday(w.apiKey));
  });

  it('never sends the key to results on another host', async () => {
    const w = await world({ resultsOnOtherHost: true });
    const summary = await run(w);
    expect(summary.exported).toBe(1);
    const downloads = w.service.resultRequests();
    expect(downloads.length).toBeGreaterThan(0);
    expect(downloads.some((r) => r.authorization)).toBe(false);
  });

  it('reads a relative result URL against the service: collected', async () => {
    const w = await world({ relativeResultUrls: true });
    const summary = await run(w);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(creates(w)).toBe(1);
  });
});

describe('results the spec leaves open in form', () => {
  it('collects a result whose job id is longer than a file name may be', async () => {
    const w = await world({ idStyle: 'long' });
    expect(w.service.jobs(EMAIL)).toHaveLength(0);
    const summary = await run(w);
    expect(w.service.jobs(EMAIL)[0]!.id.length).toBeGreaterThan(255);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(creates(w)).toBe(1);
  });

  it('collects a TIFF result and exports it', async () => {
    const w = await world({ tiffResults: true });
    const summary = await run(w);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect((await sharp(summary.files[0]!).metadata()).format).toBe('png');
    expect(creates(w)).toBe(1);
  });
});
