/**
 * How the client reads the service's answers where the spec leaves room (review rev25), `run` as
 * it drives a remote service (HttpClient, StudioEngine, runBatch, the real SQLite store) against
 * the reference /v1 service; money from its own ledger.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';
import { SHOOT_02_RECIPE } from './helpers/studio-fixtures';
import type { ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'answer-shapes@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);

const outFiles = (w: ReferenceWorld) => {
  const dir = path.join(w.root, 'out');
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String).sort() : [];
};

describe('job ids as 64-bit JSON numbers (rev25 D1)', () => {
  it('each paid job is polled with its exact digits and collected', async () => {
    const w = await world({ int64JobIds: true });
    const [photos] = await photoFolders(w, [3]);
    const run = await runOnce(w, photos!);
    // Before: 12 charged, 0 exported, 3 uncertain ("without a job id (Too big …)").
    expect(netSpent(w)).toBe(12);
    expect(run.uncertain).toEqual([]);
    expect(run.failed).toEqual([]);
    expect(run.exported).toBe(3);
    // Every poll named a job the service made, by its 19 digits.
    const made = new Set(w.service.jobs(EMAIL).map((j) => j.id));
    const polls = w.service
      .requests()
      .filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/'));
    expect(polls.length).toBeGreaterThan(0);
    for (const poll of polls) expect(made.has(poll.path.split('/').pop()!)).toBe(true);
    expect([...made].every((id) => /^\d{19}$/.test(id))).toBe(true);
  }, 90_000);

  it('a catalog job named by a 64-bit mediaItemId is collected', async () => {
    const w = await world({ int64JobIds: true });
    const [photos] = await photoFolders(w, [1]);
    const run = await runOnce(w, photos!, { recipe: SHOOT_02_RECIPE });
    // Before: 9 charged, 0 exported, 1 uncertain.
    expect(netSpent(w)).toBe(9);
    expect(run.uncertain).toEqual([]);
    expect(run.exported).toBe(1);
    expect(outFiles(w)).toHaveLength(3);
  }, 90_000);

  it('small numeric ids still work', async () => {
    const w = await world({ numericJobIds: true });
    const [photos] = await photoFolders(w, [2]);
    const run = await runOnce(w, photos!);
    expect(netSpent(w)).toBe(8);
    expect(run.exported).toBe(2);
  }, 90_000);
});

describe('one result sent unwrapped (rev25 D2)', () => {
  for (const shape of ['string', 'singular'] as const)
    it(`resultShape ${shape}: the paid result is collected`, async () => {
      const w = await world({ resultShape: shape });
      const [photos] = await photoFolders(w, [2]);
      const run = await runOnce(w, photos!);
      // Before: 8 charged, 0 exported, 2 failed "completed with no results".
      expect(netSpent(w)).toBe(8);
      expect(run.failed).toEqual([]);
      expect(run.exported).toBe(2);
      expect(outFiles(w)).toHaveLength(2);
    }, 90_000);
});

describe("a poll answered with another job's body (rev25 D4)", () => {
  it("is asked again, and each photo collects its own job's results", async () => {
    const w = await world({ pollOtherJob: 3, jobSeconds: [1, 1] });
    const [photos] = await photoFolders(w, [3]);
    const run = await runOnce(w, photos!);
    expect(netSpent(w)).toBe(12);
    expect(run.failed).toEqual([]);
    expect(run.exported).toBe(3);
    // Each photo's results are those its own job lists (asked now, without the fault).
    w.service.setOptions({ pollOtherJob: 0 });
    const db = new Database(path.join(w.root, 'data', 'studio.db'), { readonly: true });
    const items = db
      .prepare('SELECT name, job_id AS jobId, result_urls AS resultUrls FROM items')
      .all() as { name: string; jobId: string; resultUrls: string }[];
    db.close();
    expect(items).toHaveLength(3);
    for (const item of items) {
      const answer = await fetch(`${w.service.url}/v1/generations/${item.jobId}`, {
        headers: { authorization: `Bearer ${w.apiKey}` },
      });
      const own = ((await answer.json()) as { resultUrls: string[] }).resultUrls;
      // Before: 3 of 3 photos held another job's result URLs.
      expect({ name: item.name, urls: JSON.parse(item.resultUrls) as string[] }).toEqual({
        name: item.name,
        urls: own,
      });
    }
  }, 90_000);
});

describe('a poll answered under an id of the service’s own', () => {
  it('is this job: a catalog job is collected', async () => {
    const w = await world({ pollAnswerInternalId: true });
    const [photos] = await photoFolders(w, [1]);
    const run = await runOnce(w, photos!, { recipe: SHOOT_02_RECIPE });
    // Taken for another job's body (a326930), its polls were refused until give-up.
    expect(netSpent(w)).toBe(9);
    expect(run.exported).toBe(1);
    expect(outFiles(w)).toHaveLength(3);
  }, 90_000);
});

describe('an upload answered without `url` (rev25 D6)', () => {
  const uploads = (w: ReferenceWorld) =>
    w.service.requests().filter((r) => r.method === 'POST' && r.path === '/v1/uploads').length;

  it('its one address field (fileUrl) is read as the url', async () => {
    const w = await world({ uploadAnswer: 'fileUrl' });
    const [photos] = await photoFolders(w, [3]);
    const run = await runOnce(w, photos!);
    // Before: 0 charged, 3 failed 'gave up after 12 attempts', 36 uploads.
    expect(run.failed).toEqual([]);
    expect(run.exported).toBe(3);
    expect(netSpent(w)).toBe(12);
    expect(uploads(w)).toBe(3);
  }, 90_000);

  it('no address at all: each photo fails at once with the reason, one upload each', async () => {
    const w = await world({ uploadAnswer: 'idOnly' });
    const [photos] = await photoFolders(w, [3]);
    const run = await runOnce(w, photos!);
    expect(netSpent(w)).toBe(0);
    expect(run.exported).toBe(0);
    expect(run.failed).toHaveLength(3);
    for (const failed of run.failed)
      expect(failed.reason).toMatch(/without an upload url .*not sent again/);
    // Before: 36 uploads (12 per photo, read as lost answers).
    expect(uploads(w)).toBe(3);
  }, 90_000);
});

describe('job ids holding slashes (rev25 D5)', () => {
  const polls = (w: ReferenceWorld) =>
    w.service.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/v1/generations/'));

  it('behind a front that refuses %2F: asked once with the slashes literal, then so', async () => {
    const w = await world({ slashIds: true, encodedSlash404: true });
    const [photos] = await photoFolders(w, [2]);
    const run = await runOnce(w, photos!, { concurrency: 1 });
    // Before: 8 charged, 0 exported, 2 failed 'Not Found' after the not-found grace (60 s).
    expect(netSpent(w)).toBe(8);
    expect(run.failed).toEqual([]);
    expect(run.exported).toBe(2);
    // At most one refused %2F poll per job (both polled before either answered), then literal.
    expect(polls(w).filter((r) => r.status === 404).length).toBeLessThanOrEqual(2);
    expect(polls(w).at(-1)!.path).toMatch(/^\/v1\/generations\/jobs\/2026\/[0-9a-f]{8}$/);
  }, 120_000);

  it('a service that takes %2F keeps it', async () => {
    const w = await world({ slashIds: true });
    const [photos] = await photoFolders(w, [2]);
    const run = await runOnce(w, photos!);
    expect(run.exported).toBe(2);
    expect(polls(w).every((r) => r.path.includes('%2F') && r.status === 200)).toBe(true);
  }, 90_000);
});
