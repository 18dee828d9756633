/**
 * `dropshoot run` (the real command, as a child process) never ends without its summary: a reset
 * or refused connection during the recipe check at the start is asked again briefly, and a service
 * that still does not answer ends the run with a summary that says so, nothing started or spent.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceService } from '../reference-service';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { runCli } from '../soak/processes';
import { cutoutRunFolder } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function folder(photos: number) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-unreachable-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  return cutoutRunFolder(root, photos);
}

const summaryOf = (stdout: string) =>
  JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    photos: number;
    exported: number;
    held: { name: string; reason: string }[];
    unreachable?: string;
    notices: string[];
    diamondsSpent: number;
  };

describe('run when the service does not answer at the start', () => {
  it('a closed port: asked again a few times, then the summary says the service could not be reached (exit 1)', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const f = await folder(2);
    const outcome = await runCli(f.runArgs(`http://127.0.0.1:${port}`, 'k'), {
      killAtMs: null,
      timeoutMs: 90_000,
    });
    expect(outcome.code).toBe(1);
    const summary = summaryOf(outcome.stdout);
    expect(summary).toMatchObject({
      photos: 2,
      exported: 0,
      diamondsSpent: 0,
      unreachable: expect.stringMatching(/could not be reached.*ECONNREFUSED.*asked 4 times/),
    });
    expect(summary.held.map((h) => h.name).sort()).toEqual(['p0.jpg', 'p1.jpg']);
    expect(summary.held[0]!.reason).toMatch(/^not started: the service could not be reached/);
    expect(outcome.stderr).toMatch(/the service could not be reached to check the recipe/);
  }, 120_000);

  it('resets during the check are asked again and the run goes on to the end', async () => {
    const service = await startReferenceService({ seed: 4, timeScale: 0.01 });
    cleanups.push(() => service.close());
    const { apiKey } = service.createAccount({ email: 'reset@example.com', diamonds: 50 });
    let resets = 0;
    const proxy = await startFaultProxy({
      target: service.url,
      seed: 2,
      faults: { resetBefore: 1 },
      allow: (_f, method, p) => method === 'GET' && p === '/v1/models' && resets++ < 2,
    });
    cleanups.push(() => proxy.close());
    const f = await folder(2);
    const outcome = await runCli(f.runArgs(proxy.url, apiKey), {
      killAtMs: null,
      timeoutMs: 90_000,
    });
    expect(outcome.code).toBe(0);
    expect(summaryOf(outcome.stdout)).toMatchObject({ photos: 2, exported: 2 });
    expect(proxy.log.filter((e) => e.fault === 'resetBefore')).toHaveLength(2);
  }, 120_000);
});
