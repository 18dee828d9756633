/**
 * A download has a byte cap (review rev24 R6: a host streaming steadily was read into memory for
 * up to 30 min per try, 6 tries). A Content-Length above it is refused at once; a body without one
 * is cut as it passes the cap; the error says so, and nothing of the file is kept. Scaled down:
 * the cap is given (1 MiB for the loopback hosts, 1 KiB for the studio), not the default lowered.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import {
  DOWNLOAD_MAX_BYTES,
  DOWNLOAD_MAX_MS,
  DownloadTooLargeError,
  fetchDownload,
} from '../../src/client/download';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const MIB = 1024 * 1024;

/** A loopback host; `sent` counts the body bytes it wrote, `closed` the responses cut off. */
async function host(handler: (res: http.ServerResponse, count: (n: number) => void) => void) {
  const seen = { sent: 0, closed: 0 };
  const server = http.createServer((_req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) seen.closed++;
    });
    handler(res, (n) => (seen.sent += n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/r.mp4`, seen };
}

/** Writes 64 KiB every 5 ms until the response closes (a steady, endless stream). */
function stream(res: http.ServerResponse, count: (n: number) => void) {
  const chunk = Buffer.alloc(64 * 1024, 7);
  const timer = setInterval(() => {
    res.write(chunk);
    count(chunk.length);
  }, 5);
  res.on('close', () => clearInterval(timer));
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
};

describe('a download larger than the cap', () => {
  it('is sized for any legitimate result (512 MiB)', () => {
    expect(DOWNLOAD_MAX_BYTES).toBe(512 * MIB);
  });

  it('announced by its Content-Length: refused at once, before the body is read', async () => {
    const { url, seen } = await host((res, count) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 10 * MIB });
      stream(res, count);
    });
    const started = Date.now();
    const err = await fetchDownload(url, {}, 5000, DOWNLOAD_MAX_MS, MIB).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadTooLargeError);
    expect((err as Error).message).toMatch(
      /refused: it announced 10485760 bytes, more than the 1048576 bytes any result may have/,
    );
    expect((err as DownloadTooLargeError).retryable).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
    // The host's stream was cut off, not read to its end.
    await until(() => seen.closed > 0);
    expect(seen.closed).toBe(1);
  });

  it('streamed with no Content-Length: cut as it passes the cap', async () => {
    // Before: read for as long as the host sent (up to 30 min per try).
    const { url, seen } = await host((res, count) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      stream(res, count);
    });
    const err = await fetchDownload(url, {}, 5000, 20_000, MIB).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadTooLargeError);
    expect((err as Error).message).toMatch(/refused: its body passed 1048576 bytes/);
    await until(() => seen.closed > 0);
    expect(seen.closed).toBe(1);
    // Stopped near the cap (what sockets buffer aside), not at the 20 s bound.
    expect(seen.sent).toBeLessThan(16 * MIB);
  });

  it('a file within the cap still comes whole', async () => {
    const png = await sharp({
      create: { width: 64, height: 64, channels: 3, background: { r: 10, g: 200, b: 30 } },
    })
      .png()
      .toBuffer();
    const { url } = await host((res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(png);
    });
    const got = await fetchDownload(url, {}, 5000, DOWNLOAD_MAX_MS, png.length);
    expect(got.data.equals(png)).toBe(true);
  });
});

/** The HTTP client with a 1 KiB download cap (every reference result is larger). */
class OneKibClient extends HttpClient {
  constructor(options: ConstructorParameters<typeof HttpClient>[0]) {
    super({ ...options, downloadMaxBytes: 1024 });
  }
}

describe('a paid result refused for its size', () => {
  it('is held for the next run, asked once, with nothing of it written', async () => {
    const email = 'size-cap@example.com';
    const w = await referenceWorld(cleanups, {
      email,
      diamonds: 100,
      photos: 1,
      service: { seed: 5, timeScale: 0.01 },
    });
    const summary = await runOnWorld(w, { Client: OneKibClient, giveUpAfterMs: 60_000 });
    expect(chargedTo(w.service, email)).toBe(1);
    expect(summary.exported).toBe(0);
    expect(JSON.stringify(summary)).toMatch(/more than the 1024 bytes any result may have/);
    // Not promised to the next run, which fetches no larger a result (review rev26 3).
    expect(JSON.stringify(summary)).toMatch(/no run fetches a result that large/);
    expect(JSON.stringify(summary)).not.toMatch(/next run (collects|downloads)/);
    // Not asked again and again: a size does not change from one try to the next.
    expect(w.service.resultRequests()).toHaveLength(1);
    // Nothing half-written: no export, no result in the library.
    const out = path.join(w.root, 'out');
    expect(fs.existsSync(out) ? fs.readdirSync(out) : []).toEqual([]);
    const written = fs
      .readdirSync(path.join(w.root, 'data'), { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile() && /\.(jpe?g|png|webp|mp4|tmp)$/i.test(f.name));
    expect(written.map((f) => f.name)).toEqual([]);
    // The next run (no cap lowered) downloads it from the same job: nothing paid again.
    const again = await runOnWorld(w, { giveUpAfterMs: 60_000 });
    expect(again.exported).toBe(1);
    expect(chargedTo(w.service, email)).toBe(1);
  }, 90_000);
});
