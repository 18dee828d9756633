/**
 * A service that stores uploads by content (spec 2.4/4.5 say only that an upload answers {id, url}):
 * the same bytes get the same id and url again, even when another run or another workstation
 * uploaded them long ago, against the reference /v1 service (written from the spec alone). Such a
 * photo is generated and paid once, and none is failed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpClient } from '../../src/client';
import { sharp } from '../../src/infra/sharp';
import { withUploadNote } from '../../src/studio/prepare';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';

vi.setConfig({ testTimeout: 120_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'content@example.com';
const DIAMONDS = 100;
const URL_TTL_MS = 800;

const world = () =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: DIAMONDS,
    service: {
      seed: 5,
      timeScale: 0.01,
      jobSeconds: [20, 20],
      uploadsByContent: true,
      uploadUrlTtlMs: URL_TTL_MS,
    },
  });

const creates = (w: ReferenceWorld) =>
  w.service.requests().filter((r) => r.method === 'POST' && r.path === '/v1/generations').length;

/** Another workstation on the same account uploads `file` (its URL then expires). */
async function uploadedElsewhere(w: ReferenceWorld, file: string): Promise<string> {
  const client = new HttpClient({ baseUrl: w.service.url, apiKey: w.apiKey, timeoutMs: 5000 });
  try {
    return (await client.upload(fs.readFileSync(file))).url;
  } finally {
    await client.close();
  }
}

describe('uploads stored by content', () => {
  it('a photo another workstation uploaded earlier (its URL expired since) is generated and paid once', async () => {
    const w = await world();
    const photo = path.join(w.inDir, 'p0.jpg');
    const earlierUrl = await uploadedElsewhere(w, photo);
    await new Promise((resolve) => setTimeout(resolve, URL_TTL_MS + 200));

    const summary = await runOnWorld(w);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(fs.existsSync(summary.files[0]!)).toBe(true);
    const jobs = w.service.jobs(EMAIL);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.status).toBe('completed');
    const price = DIAMONDS - w.service.balance(EMAIL);
    expect(price).toBeGreaterThan(0);
    // The photo went up as other bytes: the create named a URL that is not the expired one.
    const uploads = w.service.requests().filter((r) => r.path === '/v1/uploads').length;
    expect(uploads).toBe(3); // elsewhere, this run's first (the expired URL), and once more
    expect(creates(w)).toBe(2); // the first refused 400 before any charge

    // The next run has nothing to do and pays nothing.
    const again = await runOnWorld(w);
    expect(again.failed).toEqual([]);
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
    expect(DIAMONDS - w.service.balance(EMAIL)).toBe(price);
    expect(earlierUrl).toMatch(/^http/);
  });

  it('the same bytes uploaded by an earlier run with another data folder: each run paid once, none failed', async () => {
    const w = await world();
    const first = await runOnWorld(w);
    expect(first.failed).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, URL_TTL_MS + 200));
    fs.renameSync(path.join(w.root, 'data'), path.join(w.root, 'data-first'));
    const second = await runOnWorld(w, {
      folders: { inDir: w.inDir, outDir: path.join(w.root, 'out-second') },
    });
    expect(second.failed).toEqual([]);
    expect(second.exported).toBe(1);
    // A new data folder knows nothing of the first run: it pays for its own shot, once.
    expect(w.service.jobs(EMAIL)).toHaveLength(2);
  });

  it('the bytes sent again keep the picture: JPEG, PNG and WebP decode to the same pixels', async () => {
    const picture = sharp({
      create: { width: 96, height: 64, channels: 3, background: { r: 200, g: 30, b: 90 } },
    });
    for (const format of ['jpeg', 'png', 'webp'] as const) {
      const original = await picture.clone().toFormat(format).toBuffer();
      const noted = withUploadNote(original, 'upload-item-1-again');
      expect(noted.equals(original), format).toBe(false);
      const pixels = (bytes: Buffer) => sharp(bytes, { failOn: 'error' }).raw().toBuffer();
      expect((await pixels(noted)).equals(await pixels(original)), format).toBe(true);
      expect((await sharp(noted).metadata()).format).toBe(format);
    }
  });
});
