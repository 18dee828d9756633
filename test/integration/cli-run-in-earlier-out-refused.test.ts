/**
 * `dropshoot run --in` an earlier run's --out (or a folder inside it) on the same --data is
 * refused before anything is sent: those files are that run's exports, and they would be paid
 * for again (review uirev A1, the run side of a hot folder laid on another's output). The real
 * command as a child process against the reference /v1 service; charges read from its ledger.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceService } from '../reference-service';
import { runCli } from '../soak/processes';
import { cutoutRunFolder } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'run-on-exports@example.com';

describe('run over an earlier run’s exports', () => {
  it('is refused (exit 2) naming that run’s output folder; nothing is sent or charged', async () => {
    const service = await startReferenceService({ seed: 6, timeScale: 0.01 });
    cleanups.push(() => service.close());
    const { apiKey } = service.createAccount({ email: EMAIL, diamonds: 100 });
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-run-on-exports-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const f = await cutoutRunFolder(root, 2);
    const first = await runCli(f.runArgs(service.url, apiKey), {
      killAtMs: null,
      timeoutMs: 90_000,
    });
    expect(first.code).toBe(0);
    const out = path.join(root, 'out');
    expect(fs.readdirSync(out).length).toBeGreaterThan(0);
    const charges = () => service.ledger(EMAIL).filter((e) => e.kind === 'charge').length;
    const charged = charges();
    const requests = service.requestsToday(apiKey);

    // The same command with --in the first run's --out, exported elsewhere.
    const args = f.runArgs(service.url, apiKey);
    args[args.indexOf('--in') + 1] = out;
    args[args.indexOf('--out') + 1] = path.join(root, 'out-again');
    const again = await runCli(args, { killAtMs: null, timeoutMs: 90_000 });
    expect(again.stderr).toMatch(
      new RegExp(`--in: ${fs.realpathSync(out)} is the output folder .* of an earlier run`),
    );
    expect(again.code).toBe(2);
    expect(charges()).toBe(charged);
    expect(service.requestsToday(apiKey)).toBe(requests);
    expect(fs.existsSync(path.join(root, 'out-again'))).toBe(false);
  }, 120_000);
});
