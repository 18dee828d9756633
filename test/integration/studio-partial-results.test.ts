/**
 * A final status whose result list lags behind its counters (`pack_completed`, packCompleted 3,
 * one URL listed: results written to storage after the job row is marked done, as eventually
 * consistent stores do): the studio asks the job again instead of collecting one shot of three and
 * calling the photo exported. The reference /v1 service (written from the spec alone) has no such
 * switch, so a small pass-through in front of it (helpers/spec-proxy) lists only the first result
 * of a final catalog job for `lagMs` after it first answers final.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';
import { specProxy } from './helpers/spec-proxy';
import { SHOOT_02_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'partial-results@example.com';

/** A pass-through to `target` whose final job answers list one result for `lagMs`. */
async function laggingResults(target: string, lagMs: number): Promise<string> {
  const finalSince = new Map<string, number>();
  return specProxy(target, cleanups, {
    job: (jobId, job) => {
      const urls = job.resultUrls as string[];
      if (/completed/.test(String(job.status)) && urls.length > 1) {
        const since = finalSince.get(jobId) ?? Date.now();
        finalSince.set(jobId, since);
        if (Date.now() - since < lagMs) job.resultUrls = urls.slice(0, 1);
      }
    },
  });
}

const polls = (w: ReferenceWorld) =>
  w.service.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/'))
    .length;

describe('a final status listing fewer results than it completed', () => {
  it('is asked again and every shot is exported, charged once', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 200,
      service: {
        seed: 7,
        timeScale: 0.01,
        jobSeconds: [20, 20],
        failShots: 0,
        catalogStatus: 'pack',
      },
    });
    const url = await laggingResults(w.service.url, 3000);
    const summary = await runOnWorld(
      { ...w, service: { ...w.service, url } },
      {
        recipe: SHOOT_02_RECIPE,
      },
    );
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    // Before: pack_completed with one URL was collected as it stood, 1 file of 3.
    expect(summary.files).toHaveLength(3);
    expect(fs.readdirSync(`${w.root}/out`)).toHaveLength(3);
    expect(w.service.jobs(EMAIL)).toHaveLength(1);
    // Asked again at 2 and 4 s (the 'empty' gaps), not on every tick.
    expect(polls(w)).toBeLessThanOrEqual(6);
  }, 30_000);
});
