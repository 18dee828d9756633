/**
 * `dropshoot run`'s summary counts every /v1 request the run sent, the recipe check before the
 * batch included: apiRequests is what the service counted against the key's daily cap (review
 * rev12: it was one below on every run).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli';
import { startReferenceService } from '../reference-service';

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
    const inDir = path.join(root, 'in');
    fs.mkdirSync(inDir);
    for (let i = 0; i < 2; i++)
      await sharp({
        create: { width: 320, height: 400, channels: 3, background: { r: 90 * i, g: 120, b: 90 } },
      })
        .jpeg()
        .toFile(path.join(inDir, `p${i}.jpg`));
    const recipe = path.join(root, 'recipe.json');
    fs.writeFileSync(
      recipe,
      JSON.stringify({
        request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
        export: { preset: 'original', format: 'png', naming: '{name}-{n}' },
      }),
    );
    const args = [
      'run',
      ...['--in', inDir, '--recipe', recipe, '--out', path.join(root, 'out')],
      ...['--data', path.join(root, 'data'), '--remote', service.url, '--key', apiKey],
    ];
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
