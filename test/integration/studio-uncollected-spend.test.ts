/**
 * What `run` says it spent when the daily cap closes the day on paid jobs it has not collected
 * (issue 10 items 6, 9), against the reference /v1 service (written from the spec alone). The
 * service fails those jobs and refunds them, but the studio's polls are refused at the cap, so it
 * cannot see it: its charges stay counted in `diamondsSpent`, and the summary names them apart
 * (`diamondsOnUncollectedJobs`), so the ledger is never below what it says by more than that. The
 * next day's run collects the failures (nothing spent) and a later run pays once for each photo.
 *
 * The service and the studio share one clock (the process's Date, moved a day on between runs).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';
import { shiftableClock } from './helpers/studio-fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'uncollected@example.com';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type World = ReferenceWorld;

// Every job fails (refunded) after 3 s: long enough for the cap to close before any poll sees it.
const world = (photos: number) =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: 100,
    service: { seed: 9, timeScale: 0.1, jobSeconds: [30, 30], failJobs: 1 },
    photos,
  });

/** Net diamonds the service's ledger took from the account (charges less refunds). */
const ledgerNet = (w: World) =>
  w.service
    .ledger(EMAIL)
    .filter((e) => e.kind !== 'grant')
    .reduce((sum, e) => sum - e.delta, 0);

/** `dropshoot run` on the world's data folder, as the CLI drives it; `during` runs alongside. */
async function run(w: World, during?: () => Promise<void>) {
  const before = ledgerNet(w);
  const [summary] = await Promise.all([
    runOnWorld(w, { concurrency: 3, backoff: { baseMs: 50, maxMs: 400 } }),
    during?.(),
  ]);
  return { summary, ledgerBefore: before };
}

describe('spend on paid jobs left uncollected at the daily cap', () => {
  it('names the charges on jobs to collect tomorrow; the ledger is within them of diamondsSpent, and exact once collected', async () => {
    const clock = shiftableClock((undo) => cleanups.push(undo));
    const photos = 3;
    const w = await world(photos);

    // Day 1: once every photo is charged, the service's cap is reached; the studio's next request
    // (a poll) is refused with the cap's 429, so it never sees the jobs fail.
    const day1 = await run(w, async () => {
      const deadline = Date.now() + 20_000;
      while (w.service.jobs(EMAIL).length < photos && Date.now() < deadline) await sleep(20);
      // Used up by other work on the same key (the cap the studio learns is the service's 60).
      w.service.setDailyCap(w.apiKey, 60);
      while (w.service.requestsToday(w.apiKey) < 60)
        await fetch(`${w.service.url}/v1/account`, {
          headers: { authorization: `Bearer ${w.apiKey}` },
        });
    });
    // Precondition: every job charged, none seen failed by the studio.
    expect(w.service.jobs(EMAIL)).toHaveLength(photos);
    expect(day1.summary.collectTomorrow).toHaveLength(photos);
    // Then the service fails them all and refunds them.
    const ended = Date.now() + 15_000;
    while (w.service.jobs(EMAIL).some((j) => j.status === 'processing') && Date.now() < ended)
      await sleep(50);
    expect(w.service.jobs(EMAIL).map((j) => j.status)).toEqual(['failed', 'failed', 'failed']);
    const day1Ledger = ledgerNet(w) - day1.ledgerBefore;
    expect(day1Ledger).toBe(0);

    const { diamondsSpent, diamondsOnUncollectedJobs } = day1.summary;
    const charged = w.service.jobs(EMAIL).reduce((sum, j) => sum + j.charged, 0);
    // The spend counts the charges it made, and names the part on jobs not collected.
    expect(diamondsSpent).toBe(charged);
    expect(diamondsOnUncollectedJobs).toBe(charged);
    expect(day1Ledger).toBeGreaterThanOrEqual(diamondsSpent - (diamondsOnUncollectedJobs ?? 0));
    expect(day1Ledger).toBeLessThanOrEqual(diamondsSpent);
    expect(day1.summary.notices).toContainEqual(
      `${charged} diamond(s) spent, ${charged} of them on jobs to collect tomorrow, refunded if the service fails them`,
    );

    // Day 2: the failures are collected (the service's message shown), nothing is spent or left.
    clock.nextDay();
    w.service.setOptions({ failJobs: 0 });
    const day2 = await run(w);
    expect(day2.summary.failed.map((f) => f.name).sort()).toEqual(['p0.jpg', 'p1.jpg', 'p2.jpg']);
    expect(day2.summary.diamondsSpent).toBe(0);
    expect(day2.summary.diamondsOnUncollectedJobs).toBeUndefined();
    expect(ledgerNet(w) - day2.ledgerBefore).toBe(0);

    // A later run pays once per photo, confirmed by the balance: exact.
    const day2b = await run(w);
    expect(day2b.summary.exported).toBe(photos);
    expect(day2b.summary.diamondsUnconfirmed).toBeUndefined();
    expect(day2b.summary.diamondsOnUncollectedJobs).toBeUndefined();
    expect(day2b.summary.diamondsSpent).toBe(ledgerNet(w) - day2b.ledgerBefore);
    expect(w.service.jobs(EMAIL).filter((j) => j.refunded === 0)).toHaveLength(photos);
  }, 120_000);
});
