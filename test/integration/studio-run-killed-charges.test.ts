/**
 * A run killed with kill -9 after creates were charged (review rev30 D3): the next run collected
 * those photos and reported 0 of what the killed run spent (it printed nothing), so the runs'
 * figures fell short of the ledger. The next run's summary names what an interrupted run spent on
 * the photos it collected. The real command as a child process, against the reference /v1 service
 * (keeping keys) behind a fault proxy that kills the first run at its third create; money from the
 * service's ledger.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceService } from '../reference-service';
import { startFaultProxy } from '../reference-service/fault-proxy';
import { runCli } from '../soak/processes';
import { cutoutRunFolder } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const summaryOf = (stdout: string) =>
  JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    exported: number;
    notices: string[];
    diamondsSpent: number;
  };

describe('a run killed after its creates were charged', () => {
  it('the next run names the diamonds the killed run spent on the photos it collected', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-killed-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const f = await cutoutRunFolder(root, 4);
    const service = await startReferenceService({
      seed: 4,
      timeScale: 0.01,
      honourIdempotencyKey: true,
    });
    cleanups.push(() => service.close());
    const email = 'killed@example.com';
    const { apiKey } = service.createAccount({ email, diamonds: 100 });
    let child: ChildProcess | null = null;
    let creates = 0;
    const proxy = await startFaultProxy({
      target: service.url,
      choose: (method, p) => {
        // The third create reaches the service (charged); its run is killed as it goes.
        if (method === 'POST' && p === '/v1/generations' && ++creates === 3) child?.kill('SIGKILL');
        return null;
      },
    });
    cleanups.push(() => proxy.close());
    const net = () =>
      service
        .ledger(email)
        .filter((e) => e.kind === 'charge' || e.kind === 'refund')
        .reduce((sum, e) => sum - e.delta, 0);
    // One step at a time: no other create is on its way when the third one kills its run (a
    // create sent half-way is a lost answer the service never saw: uncertain, not the point here).
    const killed = await runCli([...f.runArgs(proxy.url, apiKey), '--concurrency', '1'], {
      killAtMs: null,
      timeoutMs: 90_000,
      onStart: (c) => (child = c),
    });
    expect(killed.code).not.toBe(0);
    expect(killed.stdout.trim()).toBe('');
    const chargedByKilled = net();
    expect(chargedByKilled).toBeGreaterThan(0);
    // Past the wait a lost answer's key is given before it is sent again.
    const next = await runCli(f.runArgs(proxy.url, apiKey), {
      killAtMs: null,
      timeoutMs: 90_000,
      clockOffsetMs: 10 * 60_000,
    });
    const summary = summaryOf(next.stdout);
    expect(summary.exported).toBe(4);
    const named = summary.notices
      .map((n) => /^(\d+) diamond\(s\) were spent by an earlier run that was interrupted/.exec(n))
      .find(Boolean);
    // The runs' figures in all are the ledger.
    expect({ reported: summary.diamondsSpent + Number(named?.[1] ?? 0), ledger: net() }).toEqual({
      reported: net(),
      ledger: net(),
    });
  }, 200_000);
});
