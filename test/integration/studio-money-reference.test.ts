/**
 * The studio's money path against the reference /v1 service (written from the spec alone, not
 * our core): the remote path exactly as `dropshoot run` drives it (HttpClient, StudioEngine,
 * runBatch), with the service making the choices a production service may make where the spec is
 * silent. Every claim is checked from the service's own ledger: each photo charged once (plus
 * charges the service itself refunded), every paid result delivered, the run's summary true.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HttpClient, type ServiceClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import { StudioEngine, type EngineOptions } from '../../src/studio/engine';
import { openStudio, runCommand } from '../../src/studio';
import { runBatch, type RunOptions } from '../../src/studio/run-batch';
import {
  startReferenceService,
  type ReferenceService,
  type ReferenceServiceOptions,
} from '../reference-service';
import { startFaultProxy, type FaultProxyOptions } from '../reference-service/fault-proxy';
import { shapePhotos } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'studio@example.com';

type World = {
  root: string;
  service: ReferenceService;
  apiKey: string;
  url: string;
  inDir: string;
};

async function world(
  options: ReferenceServiceOptions,
  account: { diamonds: number; dailyCap?: number },
  photos: number,
  proxy?: Omit<FaultProxyOptions, 'target'>,
): Promise<World & { proxy?: Awaited<ReturnType<typeof startFaultProxy>> }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-money-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 3, timeScale: 0.01, ...options });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({ email: EMAIL, ...account });
  let url = service.url;
  let fault: Awaited<ReturnType<typeof startFaultProxy>> | undefined;
  if (proxy) {
    fault = await startFaultProxy({ target: service.url, ...proxy });
    cleanups.push(() => fault!.close());
    url = fault.url;
  }
  const inDir = path.join(root, 'in');
  await shapePhotos(inDir, photos);
  return { root, service, apiKey, url, inDir, ...(fault ? { proxy: fault } : {}) };
}

/** A studio on the world's data folder, for its commands as the UI sends them; closed after the test. */
async function studioOn(w: World) {
  const client = new HttpClient({ baseUrl: w.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const studio = await openStudio({ dataDir: path.join(w.root, 'data'), client, apiKey: w.apiKey });
  cleanups.push(async () => {
    await studio.close();
    await client.close();
  });
  return studio;
}

/** `dropshoot run` against the world, on a data folder that may be reused by the next call. */
async function run(
  w: World,
  recipe: Recipe,
  opts: {
    out?: string;
    data?: string;
    maxDiamonds?: number;
    engine?: Partial<EngineOptions>;
    client?: ServiceClient;
  } & RunOptions = {},
) {
  const client =
    opts.client ?? new HttpClient({ baseUrl: w.url, apiKey: w.apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({
    dataDir: opts.data ?? path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    concurrency: 3,
    backoff: { baseMs: 50, maxMs: 400 },
    capProbeMs: 300,
    balanceRecheckMs: 100,
    ...opts.engine,
  });
  try {
    const { out, data: _data, maxDiamonds, engine: _engine, client: _client, ...runOptions } = opts;
    return await runBatch(engine, {
      inDir: w.inDir,
      recipe,
      outDir: out ?? path.join(w.root, 'out'),
      ...(maxDiamonds !== undefined ? { maxDiamonds } : {}),
      ...runOptions,
    });
  } finally {
    await engine.close();
    await client.close();
  }
}

const cutout: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};
const onModel: Recipe = {
  request: {
    toolId: 'virtual_model',
    images: { fashion_model: 'person-001', garment_photo: '{photo}' },
  },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
};
const readyShoot = (id: string): Recipe => ({
  request: { readyTemplateSetId: id, images: { garment_photo: '{photo}' } },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{shot}' },
});

function money(service: ReferenceService) {
  const ledger = service.ledger(EMAIL);
  const charges = ledger.filter((e) => e.kind === 'charge');
  const refunds = ledger.filter((e) => e.kind === 'refund');
  return {
    charges: charges.length,
    refunds: refunds.length,
    /** Diamonds that stayed charged. */
    net: ledger.filter((e) => e.kind !== 'grant').reduce((sum, e) => sum - e.delta, 0),
    /** Photos charged more than once without a refund in between: must be none. */
    jobs: service.jobs(EMAIL),
  };
}

const filesIn = (dir: string) =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => /\.(png|jpe?g|webp)$/.test(f))
        .sort()
    : [];

/** A run whose first create is charged and its answer dropped: one photo exported, one uncertain. */
async function lostOne() {
  let dropped = 0;
  const w = await world({}, { diamonds: 100 }, 2, {
    seed: 1,
    faults: { dropAfter: 1 },
    allow: (_fault, method, p) => method === 'POST' && p === '/v1/generations' && dropped++ === 0,
  });
  const first = await run(w, cutout);
  expect(first.uncertain).toHaveLength(1);
  expect(money(w.service).charges).toBe(2);
  return { w, first };
}

describe('a job once paid is collected, never paid again (item 1)', () => {
  it('export folder not writable: the run fails the photos, and the re-run delivers the same paid jobs', async () => {
    const w = await world({}, { diamonds: 50 }, 3);
    const blocked = path.join(w.root, 'blocked');
    fs.writeFileSync(blocked, 'a file where a folder should be');
    const first = await run(w, cutout, { out: path.join(blocked, 'out') });
    expect(first.exported).toBe(0);
    expect(first.failed).toHaveLength(3);
    expect(money(w.service)).toMatchObject({ charges: 3, refunds: 0 });

    const again = await run(w, cutout);
    expect(again).toMatchObject({ photos: 3, exported: 3, failed: [] });
    expect(filesIn(path.join(w.root, 'out'))).toEqual(['p00-1.png', 'p01-1.png', 'p02-1.png']);
    // The same three jobs: nothing uploaded or submitted a second time.
    expect(money(w.service)).toMatchObject({ charges: 3, refunds: 0, net: 3 });
    expect(money(w.service).jobs).toHaveLength(3);
  }, 60_000);

  it('polls failing for a while (an outage) never fail a paid photo, even with a small attempt limit', async () => {
    let outage = false;
    const w = await world({ jobSeconds: [60, 80] }, { diamonds: 50 }, 3, {
      seed: 5,
      faults: { error500Before: 1 },
      // Only polls fail, and only during the outage.
      allow: (_fault, method, p) => outage && method === 'GET' && p.startsWith('/v1/generations/'),
    });
    const charged = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (money(w.service).charges === 3) {
          clearInterval(timer);
          outage = true;
          setTimeout(() => {
            outage = false;
            resolve();
          }, 1500);
        }
      }, 20);
    });
    const [summary] = await Promise.all([run(w, cutout, { engine: { maxAttempts: 2 } }), charged]);
    expect(w.proxy!.log.filter((e) => e.fault === 'error500Before').length).toBeGreaterThan(2);
    expect(summary).toMatchObject({ photos: 3, exported: 3, failed: [] });
    expect(money(w.service)).toMatchObject({ charges: 3, refunds: 0, net: 3 });
  }, 60_000);
});

describe('statuses the spec leaves open (item 2)', () => {
  it('a ready shoot answering pack_processing / pack_completed is collected shot by shot, paid once', async () => {
    const w = await world(
      { catalogStatus: 'pack', resultsOnOtherHost: true, extraFields: true, idStyle: 'opaque' },
      { diamonds: 100 },
      2,
    );
    const summary = await run(w, readyShoot('shoot-02'));
    expect(summary).toMatchObject({ photos: 2, exported: 2, failed: [] });
    // shoot-02 has 3 shots: every one delivered for both photos.
    expect(filesIn(path.join(w.root, 'out'))).toHaveLength(6);
    const m = money(w.service);
    expect(m).toMatchObject({ charges: 2, refunds: 0 });
    expect(summary.diamondsSpent).toBe(m.net);
  }, 60_000);

  it("a failed job shows the service's errorMessage and its refunded diamonds are not counted as spent", async () => {
    const w = await world({ catalogStatus: 'pack', failJobs: 1 }, { diamonds: 100 }, 2);
    const summary = await run(w, cutout);
    expect(summary.exported).toBe(0);
    expect(summary.failed).toHaveLength(2);
    const job = money(w.service).jobs[0]!;
    expect(summary.failed[0]!.reason).toBe(job.errorMessage);
    expect(money(w.service)).toMatchObject({ charges: 2, refunds: 2, net: 0 });
    expect(summary.diamondsSpent).toBe(0);
  }, 60_000);
});

describe('500 and lost answers on create (item 4)', () => {
  it('a 500 after the charge (refunded, per the spec) is sent again by itself; no photo is left uncertain', async () => {
    // 0.3: a photo failing 6 times in a row (the bound) is then a 1-in-1400 event, not 1 in 21.
    // The first create always fails after its charge: the seeded draws follow the order of
    // requests, which timing changes, and without it no 500 came in about 1 run of 15 under load.
    const w = await world(
      { fail500AfterCharge: 0.3, fail500AfterChargeFirst: 1 },
      { diamonds: 100 },
      8,
    );
    const summary = await run(w, cutout);
    expect(summary).toMatchObject({ photos: 8, exported: 8, failed: [], uncertain: [] });
    const m = money(w.service);
    expect(m.refunds).toBeGreaterThan(0);
    expect(m.charges - m.refunds).toBe(8);
    expect(summary.diamondsSpent).toBe(m.net);
  }, 60_000);

  it('a truly lost answer stays uncertain with its possible cost and ends the run; --uncertain resubmit settles it', async () => {
    const { w, first } = await lostOne();
    expect(first.exported).toBe(1);
    // Whichever photo's submission reached the proxy first lost its answer.
    expect(first.uncertain).toEqual([
      {
        name: expect.stringMatching(/^p0[01]\.jpg$/),
        reason: expect.stringMatching(/may cost 1 more diamond/),
      },
    ]);
    const lost = first.uncertain[0]!.name;
    expect(money(w.service).charges).toBe(2); // the lost one was charged; it was not sent again
    // Its charge is known only from the balance: counted, so the summary's spend is the ledger's.
    expect(first.diamondsSpent).toBe(money(w.service).net);

    const settled = await run(w, cutout, { uncertain: 'resubmit' });
    expect(settled).toMatchObject({ exported: 1, skipped: 1, uncertain: [] });
    expect(settled.notices).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^${lost.replace('.', '\\.')}: uncertain submission resubmitted .*may cost 1 more`,
        ),
      ),
    );
    // The stated cost was paid: the lost job's charge stays, one more for the resubmission.
    expect(money(w.service)).toMatchObject({ charges: 3, refunds: 0 });
  }, 60_000);
});

describe('an uncertain submission is settled by the operator (item 4)', () => {
  it('--uncertain fail: the photo is failed with the possible charge said, nothing is sent again', async () => {
    const { w, first } = await lostOne();
    const settled = await run(w, cutout, { uncertain: 'fail' });
    expect(settled).toMatchObject({ exported: 0, skipped: 1, uncertain: [] });
    expect(settled.failed).toEqual([
      {
        name: first.uncertain[0]!.name,
        reason: expect.stringContaining('it may have been charged once'),
      },
    ]);
    expect(money(w.service)).toMatchObject({ charges: 2, refunds: 0 });
  }, 60_000);

  it('from the UI: queue.resolveUncertain resubmits (one more charge, as stated) or fails it', async () => {
    const { w, first } = await lostOne();
    const studio = await studioOn(w);
    const list = async () => {
      const listed = await runCommand(studio.commands, 'queue.list', {});
      return listed.ok
        ? (
            listed.result as {
              items: {
                id: string;
                name: string;
                state: string;
                uncertain: boolean;
                note: string | null;
              }[];
            }
          ).items
        : [];
    };
    const lost = (await list()).find((i) => i.name === first.uncertain[0]!.name)!;
    expect(lost).toMatchObject({
      uncertain: true,
      note: expect.stringMatching(/may cost 1 more diamond/),
    });
    // Settling twice is harmless: the second finds nothing uncertain.
    expect(
      await runCommand(studio.commands, 'queue.resolveUncertain', {
        id: lost.id,
        action: 'resubmit',
      }),
    ).toEqual({ ok: true, result: { changed: 1 } });
    expect(
      await runCommand(studio.commands, 'queue.resolveUncertain', { id: lost.id, action: 'fail' }),
    ).toEqual({ ok: true, result: { changed: 0 } });
    const deadline = Date.now() + 30_000;
    while (
      (await list()).find((i) => i.id === lost.id)?.state !== 'exported' &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 100));
    expect((await list()).find((i) => i.id === lost.id)?.state).toBe('exported');
    expect(filesIn(path.join(w.root, 'out'))).toEqual(['p00-1.png', 'p01-1.png']);
    expect(money(w.service)).toMatchObject({ charges: 3, refunds: 0 });
  }, 60_000);
});

describe('--wait (item 5)', () => {
  it('short of diamonds with --wait: the run waits, reads the balance with backoff, and finishes once diamonds arrive', async () => {
    const w = await world({}, { diamonds: 2 }, 4);
    const granted = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        // Two photos charged, the rest refused with 402 (a run without --wait ends here): then the top-up arrives.
        if (money(w.service).charges === 2) {
          clearInterval(timer);
          setTimeout(() => {
            w.service.grant(EMAIL, 10);
            resolve();
          }, 1500);
        }
      }, 50);
    });
    const [summary] = await Promise.all([run(w, cutout, { wait: true }), granted]);
    expect(summary).toMatchObject({ photos: 4, exported: 4, held: [], failed: [] });
    expect(summary.diamondsMissing).toBeUndefined();
    expect(money(w.service)).toMatchObject({ charges: 4, net: 4 });
  }, 60_000);
});

describe('a create that certainly never went out is sent again (issue 10 open end 1)', () => {
  it('refused at a closed port: not uncertain, sent again once the service is there, charged once', async () => {
    const w = await world({}, { diamonds: 100 }, 2);
    // A port nothing listens on; the first create of the run goes there (a real refused connection).
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closed = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const service = new HttpClient({ baseUrl: w.url, apiKey: w.apiKey, timeoutMs: 5000 });
    const nowhere = new HttpClient({
      baseUrl: `http://127.0.0.1:${closed}`,
      apiKey: w.apiKey,
      timeoutMs: 5000,
    });
    let refused = 0;
    const client: ServiceClient = Object.assign(Object.create(service) as ServiceClient, {
      createGeneration: (...args: Parameters<ServiceClient['createGeneration']>) =>
        refused++ === 0 ? nowhere.createGeneration(...args) : service.createGeneration(...args),
    });
    const summary = await run(w, cutout, { client });
    expect(refused).toBe(3);
    expect(summary).toMatchObject({ photos: 2, exported: 2, failed: [], uncertain: [] });
    expect(money(w.service)).toMatchObject({ charges: 2, refunds: 0, net: 2 });
    expect(money(w.service).jobs).toHaveLength(2);
  }, 60_000);
});

describe('short of diamonds (item 5)', () => {
  it("keeps the 402's message, waits for the amount it named (not the fallback), and ends the run with the truth", async () => {
    // The real price is 5 (fallback 4); the balance of 4 covers the fallback but not the charge.
    const w = await world({ chargeExtra: 1 }, { diamonds: 9 }, 3);
    const summary = await run(w, onModel);
    expect(summary.exported).toBe(1);
    expect(summary.held).toHaveLength(2);
    expect(summary.held[0]!.reason).toContain('Insufficient diamonds: required 5, balance 4');
    expect(summary.diamondsMissing).toBe(2 * 5 - 4);
    expect(
      summary.notices?.some((n) =>
        n.includes('short of diamonds: Insufficient diamonds: required 5, balance 4'),
      ),
    ).toBe(true);
    // Not a burst of futile 402s: the balance of 4 never reopened the gate.
    const creates402 = w.service.requestsToday(w.apiKey);
    expect(creates402).toBeLessThan(20);
    expect(money(w.service)).toMatchObject({ charges: 1, net: 5 });
    expect(summary.diamondsSpent).toBe(5);

    w.service.grant(EMAIL, 10);
    const rest = await run(w, onModel);
    expect(rest).toMatchObject({ exported: 2, skipped: 1, held: [] });
    expect(money(w.service)).toMatchObject({ charges: 3, net: 15 });
  }, 60_000);
});

describe('429: rate limits and the daily cap (item 6)', () => {
  it('a rate limit with Retry-After is waited out and the run goes on; no day is closed', async () => {
    const w = await world(
      { rateLimit: { probability: 0.3, retryAfterSeconds: 1 } },
      { diamonds: 50 },
      4,
    );
    const summary = await run(w, cutout);
    expect(summary).toMatchObject({ photos: 4, exported: 4, failed: [], held: [] });
    expect(summary.notices?.some((n) => n.includes('daily request cap'))).toBe(false);
    expect(money(w.service)).toMatchObject({ charges: 4, net: 4 });
  }, 60_000);

  it('the daily cap ends the run saying so and which paid jobs the next run collects; a raised cap lets it finish, nothing paid twice', async () => {
    const w = await world({ jobSeconds: [20, 30] }, { diamonds: 50, dailyCap: 12 }, 4);
    const first = await run(w, cutout);
    const capNotice = first.notices?.find((n) => n.includes('daily request cap reached'));
    expect(capNotice).toContain('Daily request cap of 12 reached');
    const paid = money(w.service).jobs.length;
    expect(paid).toBeGreaterThan(0);
    expect(first.exported).toBeLessThan(4);
    expect((first.collectTomorrow ?? []).length + first.exported).toBe(paid);
    expect(capNotice).toContain(
      `${first.collectTomorrow?.length} paid job(s) will be collected by the next run`,
    );

    w.service.setDailyCap(w.apiKey, 200);
    const next = await run(w, cutout);
    expect(next.exported + next.skipped).toBe(4);
    expect(filesIn(path.join(w.root, 'out'))).toHaveLength(4);
    expect(money(w.service)).toMatchObject({ charges: 4, refunds: 0, net: 4 });
  }, 60_000);
});

describe("the service's daily cap closes the day for requests still in flight (item 6)", () => {
  // A request sent before the day closed that succeeds after it (a slow create) must not reopen
  // the day: it did, and the next ticks sent more requests into the cap (10 refused in a row).
  it('nothing is sent after the first daily-cap refusal but requests already on their way', async () => {
    const w = await world(
      { createDelayMs: 800, timeScale: 0.1, jobSeconds: [10, 20] },
      { diamonds: 100, dailyCap: 8 },
      6,
      {
        seed: 1,
      },
    );
    const summary = await run(w, onModel, { engine: { concurrency: 4, capProbeMs: 600_000 } });
    expect(summary.notices).toContainEqual(expect.stringContaining('daily request cap reached'));
    const log = w.proxy!.log;
    const firstRefusal = log.find((e) => e.upstreamStatus === 429)!;
    const after = log.filter((e) => Date.parse(e.at) > Date.parse(firstRefusal.at) + 100);
    expect(after.map((e) => `${e.method} ${e.path} ${e.upstreamStatus}`)).toEqual([]);
  }, 60_000);
});

describe('requests budget (item 7)', () => {
  it('--daily-cap: the run says how many photos fit today and starts no more; the service never answers 429', async () => {
    const w = await world({}, { diamonds: 50 }, 6);
    const summary = await run(w, cutout, { engine: { dailyCap: 14 } });
    const plan = summary.notices?.find((n) => n.startsWith('requests left today'));
    // Two requests went on prices and the balance before the plan was made.
    expect(plan).toBe(
      'requests left today: 12 of 14 (about 3 per photo): 3 of 6 photo(s) fit today',
    );
    expect(summary.exported).toBeGreaterThanOrEqual(3);
    expect(summary.exported + summary.held.length).toBe(6);
    expect(w.service.requestsToday(w.apiKey)).toBeLessThanOrEqual(14);
    expect(money(w.service).charges).toBe(summary.exported);
  }, 60_000);
});

describe('diamond ceilings against the real charge (items 9, 10)', () => {
  it('--max-diamonds is never crossed when the charge is above the fallback price; spend is reconciled from the balance', async () => {
    const w = await world({ chargeExtra: 1 }, { diamonds: 100 }, 6);
    const summary = await run(w, onModel, { maxDiamonds: 20, engine: { concurrency: 6 } });
    const m = money(w.service);
    expect(m.net).toBeLessThanOrEqual(20);
    // Near the ceiling at the list (no reading yet) one photo goes before a reading (a credit in a
    // window of several can hide a rise: studio-budget-credit-hides-rise); it shows 5, planned with
    // its margin (7) from then on: three fit, not the four that went at 4 + 1 together before.
    expect(summary.exported).toBe(3);
    expect(summary.held).toHaveLength(3);
    expect(summary.diamondsSpent).toBe(m.net);
  }, 60_000);

  it('the spend is what the ledger says when balance reads lose their answers (soak seed 71)', async () => {
    // Every other GET /v1/account answer is lost after the service answered: the batch's first
    // balance read and the one after it. Before, the run counted spend at the list price (3 of 6).
    let accountReads = 0;
    const w = await world({ chargeExtra: 1 }, { diamonds: 100 }, 3, {
      seed: 71,
      choose: (method, p) =>
        method === 'GET' && p === '/v1/account'
          ? ++accountReads % 2 === 1
            ? 'dropAfter'
            : null
          : undefined,
    });
    const summary = await run(w, cutout);
    expect(summary.exported).toBe(3);
    expect(money(w.service).net).toBe(6);
    expect(summary.diamondsSpent).toBe(6);
    // Both reads were lost once and asked again: the first before any charge, the last after them.
    expect(accountReads).toBe(4);
  }, 60_000);

  it("at the service's daily cap the balance cannot be read after the batch: the spend counted at list prices is said to be unconfirmed", async () => {
    // Long jobs: the day closes while every paid job still runs, before the closing balance read.
    const w = await world(
      { chargeExtra: 1, timeScale: 0.1, jobSeconds: [30, 40] },
      { diamonds: 100, dailyCap: 10 },
      3,
    );
    const summary = await run(w, onModel);
    const m = money(w.service);
    expect(summary.collectTomorrow?.length).toBeGreaterThan(0);
    expect(m.net).toBe(5 * m.charges);
    // Counted at the list price (4 each), and said to be so: never more than the ledger.
    expect(summary.diamondsSpent).toBe(4 * m.charges);
    expect(summary.diamondsUnconfirmed).toBe(4 * m.charges);
    expect(summary.notices).toContainEqual(
      expect.stringContaining(
        "the balance could not be read after the batch (today's requests are closed)",
      ),
    );
  }, 60_000);

  it('a ready shoot is priced before it starts: a ceiling below one shoot spends nothing', async () => {
    const w = await world({ catalogStatus: 'pack' }, { diamonds: 100 }, 3);
    const summary = await run(w, readyShoot('shoot-04'), {
      maxDiamonds: 10,
      engine: { concurrency: 3 },
    });
    expect(money(w.service).net).toBeLessThanOrEqual(10);
    expect(summary.exported + summary.held.length).toBe(3);
  }, 60_000);
});

describe('retry from the UI (item 1)', () => {
  it('queue.retry of a photo whose export failed collects the paid job again: no upload, no second charge', async () => {
    const w = await world({}, { diamonds: 50 }, 2);
    const blocked = path.join(w.root, 'blocked');
    fs.writeFileSync(blocked, 'a file where a folder should be');
    const first = await run(w, cutout, { out: path.join(blocked, 'out') });
    expect(first.failed).toHaveLength(2);
    const requestsBefore = w.service.requestsToday(w.apiKey);
    fs.rmSync(blocked); // the folder can be written now

    const studio = await studioOn(w);
    const listed = await runCommand(studio.commands, 'queue.list', {});
    const ids = (listed.ok ? (listed.result as { items: { id: string }[] }).items : []).map(
      (i) => i.id,
    );
    expect(await runCommand(studio.commands, 'queue.retry', { ids })).toEqual({
      ok: true,
      result: { changed: 2 },
    });
    const deadline = Date.now() + 30_000;
    while (filesIn(path.join(blocked, 'out')).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(filesIn(path.join(blocked, 'out'))).toEqual(['p00-1.png', 'p01-1.png']);
    expect(money(w.service)).toMatchObject({ charges: 2, refunds: 0 });
    // Nothing was uploaded or created again (at most a poll or a price read).
    expect(w.service.requestsToday(w.apiKey) - requestsBefore).toBeLessThanOrEqual(2);
  }, 60_000);
});

describe('what run takes from the folder', () => {
  it('photos by the shared media table whatever the case of their extension; no other file is sent', async () => {
    const w = await world({}, { diamonds: 50 }, 2);
    fs.renameSync(path.join(w.inDir, 'p01.jpg'), path.join(w.inDir, 'p01.JPEG'));
    fs.writeFileSync(path.join(w.inDir, 'notes.txt'), 'not a photo');
    fs.writeFileSync(path.join(w.inDir, 'clip.mp4'), 'not a photo either');
    const summary = await run(w, cutout);
    expect(summary).toMatchObject({ photos: 2, exported: 2, failed: [] });
    expect(money(w.service).charges).toBe(2);
  }, 60_000);
});

describe('polls hold no slot (item 8)', () => {
  it('with one slot, every photo is submitted while the first job still runs', async () => {
    const w = await world({ timeScale: 0.1, jobSeconds: [20, 25] }, { diamonds: 50 }, 4);
    const summary = await run(w, cutout, { engine: { concurrency: 1 } });
    expect(summary.exported).toBe(4);
    const jobs = w.service.jobs(EMAIL);
    const timings = new Map(w.service.timings(EMAIL).map((t) => [t.id, t]));
    const firstDone = Math.min(
      ...jobs.map((j) => Date.parse(j.createdAt) + timings.get(j.id)!.durationMs),
    );
    const lastCreated = Math.max(...jobs.map((j) => Date.parse(j.createdAt)));
    expect(lastCreated).toBeLessThan(firstDone);
  }, 60_000);
});
