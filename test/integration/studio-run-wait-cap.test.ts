/**
 * `dropshoot run --wait` at a closed day (issue 10 item 6): the real `run` process, against the
 * reference /v1 service (written from the spec alone) in its own process, both clocks set seconds
 * before 00:00 UTC (test/soak/clock.ts). When the day closes (the service's 429 naming its daily
 * cap, or the studio's own `--daily-cap`) `run` prints one line saying so: the cap, the requests
 * used, the wait until 00:00 UTC and how long it is, the paid jobs collected then; and one line
 * when the wait ends. Then it finishes the batch.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import { readJobs, runCli, startServiceProcess, type ServiceProcess } from '../soak/processes';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'run-wait@example.com';
const DAY_MS = 86_400_000;
/** How long before 00:00 UTC `run` starts: its start-up (tsx, a loaded machine) and the cap fit in it. */
const BEFORE_MIDNIGHT_MS = 25_000;

const cutout: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

const CLOSED =
  /^dropshoot: daily request cap reached \((.+)\): (\d+) request\(s\) used today(?: of (\d+))?; waiting until 00:00 UTC \((\S+)\), in (\d+) h (\d+) min \(--wait\)\. (\d+) paid job\(s\) will be collected then: (.*); (\d+) photo\(s\) not paid for yet$/gm;
const OVER =
  /^dropshoot: the wait for the daily cap is over after \d+ min \d+ s \(a new UTC day, (\d{4}-\d\d-\d\d)\): going on with the (\d+) paid job\(s\) to collect and (\d+) photo\(s\) to start$/gm;

async function setUp(opts: { photos: number; serviceCap: number; usedBefore: number }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-run-wait-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const dirs = { in: path.join(root, 'in'), out: path.join(root, 'out') };
  fs.mkdirSync(dirs.in);
  for (let i = 0; i < opts.photos; i++)
    await sharp({
      create: { width: 320, height: 400, channels: 3, background: { r: 60 * i, g: 100, b: 140 } },
    })
      .jpeg()
      .toFile(path.join(dirs.in, `p${i}.jpg`));
  const recipe = path.join(root, 'recipe.json');
  fs.writeFileSync(recipe, JSON.stringify(cutout));
  // Both processes read the same clock: 00:00 UTC comes BEFORE_MIDNIGHT_MS (plus set-up) from now.
  const midnight = Math.ceil((Date.now() + DAY_MS / 2) / DAY_MS) * DAY_MS;
  const setUpMs = 10_000;
  const clockOffsetMs = midnight - BEFORE_MIDNIGHT_MS - setUpMs - Date.now();
  const service: ServiceProcess = await startServiceProcess({
    statePath: path.join(root, 'service.json'),
    options: { seed: 4, timeScale: 0.05 },
    token: 'run-wait',
    log: [],
    clockOffsetMs,
  });
  cleanups.push(() => service.stop('SIGTERM'));
  const { apiKey } = await service.admin<{ apiKey: string }>('POST', 'accounts', {
    email: EMAIL,
    diamonds: 100,
    dailyCap: opts.serviceCap,
  });
  await service.admin('POST', 'requests-today', { apiKey, n: opts.usedBefore });
  const early = midnight - BEFORE_MIDNIGHT_MS - (Date.now() + clockOffsetMs);
  if (early > 0) await new Promise((r) => setTimeout(r, early));
  const run = (extra: string[]) =>
    runCli(
      [
        '--in',
        dirs.in,
        '--recipe',
        recipe,
        '--out',
        dirs.out,
        '--data',
        path.join(root, 'data'),
        '--remote',
        service.url,
        '--key',
        apiKey,
        '--wait',
        ...extra,
      ],
      { killAtMs: null, timeoutMs: 90_000, clockOffsetMs },
    );
  return { run, service, midnight, dirs };
}

describe('run --wait says when the daily cap closes the day and when the wait ends', () => {
  it.each([
    // The service's cap is not known before its 429 (a first day): the 429 closes the day.
    { closedBy: "the service's 429", photos: 3, serviceCap: 40, usedBefore: 34, extra: [] },
    // The studio's own count: the photos that do not fit today's 12 requests wait for tomorrow's.
    {
      closedBy: '--daily-cap',
      photos: 5,
      serviceCap: 500,
      usedBefore: 0,
      extra: ['--daily-cap', '12'],
    },
  ])(
    'closed by $closedBy',
    async ({ closedBy, photos, serviceCap, usedBefore, extra }) => {
      const { run, service, midnight, dirs } = await setUp({ photos, serviceCap, usedBefore });
      const outcome = await run(extra);
      const stderr = outcome.stderr;

      const closed = [...stderr.matchAll(CLOSED)];
      const over = [...stderr.matchAll(OVER)];
      expect(closed, stderr).toHaveLength(1);
      expect(over, stderr).toHaveLength(1);
      expect(stderr.indexOf(closed[0]![0])).toBeLessThan(stderr.indexOf(over[0]![0]));
      const [, why, , cap, until, hours, minutes, paidCount, paidNames] = closed[0]!;
      if (closedBy === '--daily-cap') {
        expect(why).toMatch(
          /^--daily-cap 12$|^\d+ request\(s\) left today, fewer than a photo needs$/,
        );
        expect(cap).toBe('12');
      } else expect(why).toMatch(/Daily request cap of 40 reached/);
      // The wait is until the next 00:00 UTC, seconds away: "in 0 h 1 min" at most.
      expect(until).toBe(new Date(midnight).toISOString());
      expect(Number(hours) * 60 + Number(minutes)).toBeLessThanOrEqual(1);
      // The paid jobs named are jobs the service charged before 00:00 UTC, each once.
      const names = Number(paidCount) > 0 ? paidNames!.split(', ') : [];
      expect(names).toHaveLength(Number(paidCount));
      const all = Array.from({ length: photos }, (_, i) => `p${i}.jpg`);
      for (const name of names) expect(all).toContain(name);
      const jobs = await readJobs(service, EMAIL);
      expect(jobs.filter((j) => Date.parse(j.createdAt) < midnight).length).toBeGreaterThanOrEqual(
        names.length,
      );
      expect(over[0]![1]).toBe(new Date(midnight).toISOString().slice(0, 10));
      // What the wait ends on is what the closing line said was waiting.
      expect([over[0]![2], over[0]![3]]).toEqual([paidCount, closed[0]![9]]);

      // Then the batch is finished, each photo paid once.
      const summary = JSON.parse(outcome.stdout.trim().split('\n').at(-1)!) as {
        exported: number;
      };
      expect(outcome.code, stderr).toBe(0);
      expect(summary.exported).toBe(photos);
      expect(fs.readdirSync(dirs.out).filter((f) => f.endsWith('.png'))).toHaveLength(photos);
      expect(jobs.filter((j) => j.refunded === 0)).toHaveLength(photos);
    },
    120_000,
  );
});
