/**
 * `dropshoot run`'s summary counts every /v1 request the run sent, the recipe check before the
 * batch included: apiRequests is what the service counted against the key's daily cap (review
 * rev12: it was one below on every run).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli';
import { startReferenceService } from '../reference-service';
import { cutoutRunFolder } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('run summary apiRequests', () => {
  it("equals the service's count of the run's requests, on a first run and a rerun", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-api-requests-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const service = await startReferenceService({ seed: 5, timeScale: 0.01 });
    cleanups.push(() => service.close());
    const { apiKey } = service.createAccount({ email: 'requests@ref.test', diamonds: 100 });
    const args = ['run', ...(await cutoutRunFolder(root, 2)).runArgs(service.url, apiKey)];
    let counted = 0;
    for (const run of ['first', 'rerun']) {
      const outcome = await runCli(args, 90_000);
      expect(outcome.code, `${run}: ${outcome.stderr}`).toBe(0);
      const summary = JSON.parse(outcome.stdout.trim().split('\n').at(-1)!) as {
        apiRequests: number;
      };
      const sent = service.requestsToday(apiKey) - counted;
      counted += sent;
      // Before: one below (the recipe check's request was left out).
      expect(summary.apiRequests, run).toBe(sent);
    }
  }, 180_000);
});
