/**
 * `run --uncertain resubmit` on a service that keeps no Idempotency-Key and loses every create's
 * answer after the charge (a connection reset): each photo is resubmitted once at most, ever,
 * and only when the batch's ceiling has room for a second charge (review rev17 U1: every photo
 * was resubmitted each time the batch settled, paying again and again, past `--max-diamonds`).
 * The studio (HttpClient, StudioEngine, runBatch, the real SQLite store) against the reference
 * /v1 service behind a loopback front; money is read from the service's own ledger.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { netSpent as netSpentOf, ON_MODEL, photoFolders } from './helpers/price-reading-studio';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';
import { rewritingFront } from './helpers/rewriting-front';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'uncertain-resubmit-once@ref.test';
const netSpent = (w: ReferenceWorld) => netSpentOf(w, EMAIL);
/** Enough for 15 creates at 4: before the fix the loop spent it all. */
const BALANCE = 60;

const world = () =>
  referenceWorld(cleanups, {
    email: EMAIL,
    diamonds: BALANCE,
    service: { seed: 17, timeScale: 0.01 },
  });

/**
 * A front before the service that passes everything on and cuts the connection instead of passing
 * on a create's 2xx (the charge made, its answer lost). Refused creates (the studio's key probes,
 * 400) are passed on. `charged` counts the answers cut.
 */
async function loseChargedCreates(target: string) {
  const proxy = { url: '', charged: 0 };
  proxy.url = await rewritingFront(cleanups, target, (request, answer) => {
    if (request.method !== 'POST' || request.path !== '/v1/generations' || answer.status >= 300)
      return answer;
    proxy.charged++;
    return 'cut';
  });
  return proxy;
}

/** One `run --uncertain resubmit` of ON_MODEL (4 at the list), every charged create's answer lost. */
async function runLosingEveryCreate(w: ReferenceWorld, inDir: string, maxDiamonds?: number) {
  const proxy = await loseChargedCreates(w.service.url);
  const summary = await runOnWorld(w, {
    baseUrl: proxy.url,
    recipe: ON_MODEL,
    uncertain: 'resubmit',
    folders: { inDir, outDir: path.join(w.root, 'out') },
    concurrency: 4,
    backoff: { baseMs: 50, maxMs: 400 },
    engine: { balanceRecheckMs: 100 },
    ...(maxDiamonds !== undefined ? { maxDiamonds } : {}),
  });
  return { summary, creates: proxy.charged };
}

describe('--uncertain resubmit with every create answer lost after the charge', () => {
  it('resubmits each photo once, leaves it uncertain after, and a rerun resubmits nothing', async () => {
    const w = await world();
    const [dir] = await photoFolders(w, [3]);
    const one = await runLosingEveryCreate(w, dir!);
    // Before: resubmitted each time the batch settled, until the balance (60) ran out.
    expect(netSpent(w)).toBe(24);
    expect(one.summary.exported).toBe(0);
    expect(one.summary.uncertain).toHaveLength(3);
    for (const u of one.summary.uncertain)
      expect(u.reason).toMatch(/resubmitted once already.*never resubmitted again/);
    // The ledger's charges are all reported (the balance shows both lost creates of each photo).
    expect(one.summary.diamondsSpent).toBeGreaterThanOrEqual(netSpent(w));
    // A later run with the flag: nothing is sent again.
    const two = await runLosingEveryCreate(w, dir!);
    expect(two.creates).toBe(0);
    expect(netSpent(w)).toBe(24);
    expect(two.summary.uncertain).toHaveLength(3);
    expect(two.summary.diamondsSpent).toBe(0);
  }, 120_000);

  it('counts each lost create at its plan against --max-diamonds: a resubmit only where a second charge fits', async () => {
    const w = await world();
    const [dir] = await photoFolders(w, [3]);
    const one = await runLosingEveryCreate(w, dir!, 20);
    // 3 creates (12, possibly charged) and one resubmit (4 and its margin 1 fit in 20; a second does not).
    // Before: 44 charged under a ceiling of 20 (killed at 60 s); here the balance (60) ran out.
    expect(netSpent(w)).toBe(16);
    expect(one.summary.diamondsSpent).toBeGreaterThanOrEqual(netSpent(w));
    expect(one.summary.uncertain).toHaveLength(3);
    expect(
      one.summary.uncertain.filter((u) => /ceiling of 20 diamonds has no room/.test(u.reason)),
    ).toHaveLength(2);
  }, 120_000);
});
