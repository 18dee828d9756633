/**
 * A paid shot is never lost to a result list that lags behind its counters, and a job that never
 * lists the rest does not hold the photo for ever: a final catalog job listing 1 result of 3 past
 * every ask is collected as it stands and exported with a note naming the shots still owed; the
 * next runs ask the same job once each (no second charge, no 6-answer ladder) and collect the
 * rest if it comes, for about a day; a job the service forgot (404) or one older than a day is
 * not asked again and the note names the shots paid and never listed. A refused download whose
 * fresh-URL poll lists more than was stored keeps the longer list (and its longer shot map). The
 * reference /v1 service (written from the spec alone) has no such switches, so a small
 * pass-through (helpers/spec-proxy) lists only the first result of a final job while `lagging`,
 * can refuse (410) the first download of each result, and answers 404 for forgotten jobs.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';
import { specProxy } from './helpers/spec-proxy';
import { SHOOT_02_RECIPE } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

type Proxy = {
  url: string;
  /** Final answers list only the first result while this is true (or while `lagAnswers` last). */
  lagging: boolean;
  /** Final answers that still list only the first result (counted down per answer). */
  lagAnswers: number;
  /** Results whose first download is refused with 410 (an expired signed URL). */
  refuseFirstDownload: boolean;
  /** Jobs the service no longer knows (their polls answer 404). */
  forgotten: Set<string>;
  /** Answers carry a spec-shaped per-shot `shots` list of the results listed. */
  shotsField: boolean;
  /** Polls per job id that reached the service, a forgotten one's included. */
  polls: Map<string, number>;
};

async function laggingProxy(target: string): Promise<Proxy> {
  const refused = new Set<string>();
  const proxy: Proxy = {
    url: '',
    lagging: false,
    lagAnswers: 0,
    refuseFirstDownload: false,
    forgotten: new Set(),
    shotsField: false,
    polls: new Map(),
  };
  proxy.url = await specProxy(target, cleanups, {
    answer: (url) => {
      const poll = /^\/v1\/generations\/([^/?]+)/.exec(url);
      if (poll) proxy.polls.set(poll[1]!, (proxy.polls.get(poll[1]!) ?? 0) + 1);
      if (poll && proxy.forgotten.has(poll[1]!))
        return {
          status: 404,
          body: JSON.stringify({ success: false, error: `Generation ${poll[1]} not found` }),
        };
      if (proxy.refuseFirstDownload && !url.startsWith('/v1/') && !refused.has(url)) {
        refused.add(url);
        return { status: 410, body: 'the link expired' };
      }
      return undefined;
    },
    job: (_id, job) => {
      let urls = job.resultUrls as string[];
      if (/completed/.test(String(job.status)) && urls.length > 1) {
        const lag = proxy.lagging || proxy.lagAnswers > 0;
        if (proxy.lagAnswers > 0) proxy.lagAnswers--;
        if (lag) urls = urls.slice(0, 1);
      }
      job.resultUrls = urls;
      if (proxy.shotsField)
        job.shots = urls.map((u, n) => ({
          shotId: `shot-${n + 1}`,
          status: 'completed',
          resultUrls: [u],
        }));
    },
  });
  return proxy;
}

const SERVICE = {
  seed: 7,
  timeScale: 0.01,
  jobSeconds: [20, 20] as [number, number],
  failShots: 0,
  catalogStatus: 'pack' as const,
};

const creates = (w: ReferenceWorld) =>
  w.service.requests().filter((r) => r.method === 'POST' && r.path.startsWith('/v1/catalog'))
    .length;

type Row = { id: string; name: string; state: string; jobId: string; note: string | null };

/** The studio's rows, read from its database between runs (as a person inspecting it would). */
function rows(w: ReferenceWorld): Row[] {
  const db = new Database(path.join(w.root, 'data', 'studio.db'), { readonly: true });
  try {
    return db
      .prepare(
        "SELECT id, name, state, job_id AS jobId, note FROM items WHERE state != 'skipped' ORDER BY name",
      )
      .all() as Row[];
  } finally {
    db.close();
  }
}

/** Moves a row's submission back in time (a job first collected more than a day ago). */
function age(w: ReferenceWorld, itemId: string, hours: number): void {
  const db = new Database(path.join(w.root, 'data', 'studio.db'));
  try {
    db.prepare('UPDATE items SET submitted_at = ? WHERE id = ?').run(
      new Date(Date.now() - hours * 3600_000).toISOString(),
      itemId,
    );
  } finally {
    db.close();
  }
}

const outFiles = (w: ReferenceWorld) =>
  fs.existsSync(`${w.root}/out`) ? fs.readdirSync(`${w.root}/out`) : [];

describe('results lagging past every ask', () => {
  it('export what is listed with the shots owed; the next run collects the rest of the same job', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'partial-hold@example.com',
      diamonds: 200,
      service: SERVICE,
    });
    const proxy = await laggingProxy(w.service.url);
    proxy.lagging = true;
    const world = { ...w, service: { ...w.service, url: proxy.url } };
    const first = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    // Before: the photo was held (failed) and its one paid, collected result never exported.
    expect(first.failed).toEqual([]);
    expect(first.exported).toBe(1);
    expect(outFiles(w)).toHaveLength(1);
    expect(rows(w)[0]!.note).toMatch(
      /partial: 1 result\(s\) exported; 2 shot\(s\) paid for and not listed yet/,
    );
    // The run's summary names it apart from complete exports.
    expect(first.partial).toEqual([{ name: 'p0.jpg', reason: rows(w)[0]!.note }]);
    const charged = w.service.jobs('partial-hold@example.com').length;
    expect(charged).toBe(1);

    proxy.lagging = false;
    const second = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    expect(second.exported).toBe(1);
    expect(second.failed).toEqual([]);
    expect(outFiles(w)).toHaveLength(3);
    expect(rows(w)[0]!.note).toBe('results listed late, all collected');
    expect(second.partial).toBeUndefined();
    // The same job, polled again: never submitted twice.
    expect(w.service.jobs('partial-hold@example.com')).toHaveLength(1);
    expect(creates(w)).toBe(1);
  }, 150_000);

  it('a job that never lists the rest is asked once per run for a day, a forgotten one never again', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'partial-never@example.com',
      diamonds: 200,
      service: SERVICE,
      photos: 2,
    });
    const proxy = await laggingProxy(w.service.url);
    proxy.lagging = true;
    const world = { ...w, service: { ...w.service, url: proxy.url } };
    const first = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    // Before: 0 exported, both held as failed (the run's exit code fails), 0 files in --out.
    expect(first.failed).toEqual([]);
    expect(first.exported).toBe(2);
    expect(outFiles(w)).toHaveLength(2);
    const [p0, p1] = rows(w);
    const counted = () => [proxy.polls.get(p0!.jobId) ?? 0, proxy.polls.get(p1!.jobId) ?? 0];

    // Run 2: each job asked once (before: 6 answers each, about a minute), still exported.
    let was = counted();
    const second = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    expect(second.failed).toEqual([]);
    expect(second.exported + second.skipped).toBe(2);
    expect(counted()).toEqual([was[0]! + 1, was[1]! + 1]);

    // Run 3: p1's job is more than a day old: not asked, its note names the shots never listed.
    age(w, p1!.id, 25);
    was = counted();
    const third = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    expect(third.failed).toEqual([]);
    expect(counted()).toEqual([was[0]! + 1, was[1]!]);
    expect(rows(w)[1]!.note).toMatch(
      /partial: 1 result\(s\) exported; 2 shot\(s\) paid for and never listed by job .* \(submitted more than a day ago\)/,
    );

    // Run 4: the service forgot p0's job (404): asked once, the photo stays exported, not failed.
    proxy.forgotten.add(p0!.jobId);
    was = counted();
    const fourth = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    expect(fourth.failed).toEqual([]);
    expect(counted()).toEqual([was[0]! + 1, was[1]!]);
    expect(rows(w)[0]).toMatchObject({ state: 'exported' });
    expect(rows(w)[0]!.note).toMatch(/never listed by job .* \(the service no longer knows it\)/);

    // Run 5: nothing asked at all; the one paid result of each is still in --out.
    was = counted();
    const fifth = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    expect(fifth.failed).toEqual([]);
    expect(counted()).toEqual(was);
    expect(outFiles(w)).toHaveLength(2);
    expect(w.service.jobs('partial-never@example.com')).toHaveLength(2);
    expect(creates(w)).toBe(2);
  }, 200_000);

  it('a refused download whose fresh poll lists more keeps the longer list', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'partial-catchup@example.com',
      diamonds: 200,
      service: SERVICE,
    });
    const proxy = await laggingProxy(w.service.url);
    // Every ask lists 1 of 3; the fresh-URL poll after the refused download lists all 3.
    proxy.lagAnswers = 6;
    proxy.refuseFirstDownload = true;
    const world = { ...w, service: { ...w.service, url: proxy.url } };
    const summary = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    // Before: "the job, asked again, lists 3 result(s) where 1 were stored": 0 files of 3 paid.
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(fs.readdirSync(`${w.root}/out`)).toHaveLength(3);
    expect(w.service.jobs('partial-catchup@example.com')).toHaveLength(1);
  }, 150_000);

  it('a fresh poll listing more shots extends the shot map when the earlier shots are unchanged', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'partial-shots@example.com',
      diamonds: 200,
      service: SERVICE,
    });
    const proxy = await laggingProxy(w.service.url);
    proxy.lagAnswers = 6;
    proxy.refuseFirstDownload = true;
    proxy.shotsField = true;
    const world = { ...w, service: { ...w.service, url: proxy.url } };
    const summary = await runOnWorld(world, { recipe: SHOOT_02_RECIPE });
    // Before: "lists its shots in another order" (1 shot stored, 3 listed): 0 files of 3 paid.
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(outFiles(w)).toHaveLength(3);
    const db = new Database(path.join(w.root, 'data', 'studio.db'), { readonly: true });
    const shots = db.prepare('SELECT shot_id AS shot FROM results ORDER BY n').all();
    db.close();
    expect(shots).toEqual([{ shot: 'shot-1' }, { shot: 'shot-2' }, { shot: 'shot-3' }]);
    expect(w.service.jobs('partial-shots@example.com')).toHaveLength(1);
  }, 150_000);

  it('a subset reported with the whole set as packTotal, its failed shot counted in packCompleted, is not partial', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'partial-subset@example.com',
      diamonds: 200,
      service: { ...SERVICE, packTotalFullSet: true },
    });
    // 2 shots asked of 3: the service's answer (packTotal 3) is made to say one failed, counted in
    // packCompleted 2 too (a service counting failed shots as completed), with 1 result listed.
    let polls = 0;
    const url = await specProxy(w.service.url, cleanups, {
      job: (_id, job) => {
        polls++;
        const urls = job.resultUrls as string[];
        if (/completed/.test(String(job.status)) && urls.length === 2) {
          job.resultUrls = urls.slice(0, 1);
          job.packFailed = 1;
        }
      },
    });
    const recipe: Recipe = {
      ...SHOOT_02_RECIPE,
      request: { ...SHOOT_02_RECIPE.request, shotIds: ['take-1', 'take-2'] } as Recipe['request'],
    };
    const summary = await runOnWorld({ ...w, service: { ...w.service, url } }, { recipe });
    // Before: owed 2 (packCompleted), 1 listed: asked 6 times, then held 'partial: 1 collected'.
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(rows(w)[0]!.note ?? '').not.toMatch(/partial/);
    expect(polls).toBeLessThanOrEqual(3);
  }, 150_000);
});
