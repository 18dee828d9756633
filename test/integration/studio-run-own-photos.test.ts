/**
 * `run` spends on the photos of its own `--in` only: a photo an earlier run left uncharged (held
 * for a short balance, say) in another folder is not started by a later run of another folder,
 * whose `--max-diamonds` it would escape (its own batch had no ceiling); a run of its own folder
 * takes it over. Against the reference /v1 service (written from the spec alone); money is
 * checked from the service's ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { photoFolders, priceWorlds, runOnce } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'run-own-photos@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 3);

describe('run spends on its own photos', () => {
  it("another folder's photos left uncharged by an earlier run wait for a run of their own", async () => {
    // virtual_model lists and charges 4; the balance (3) refuses the first create: 402.
    const w = await world({});
    const [first, second] = await photoFolders(w, [4, 8]);
    const one = await runOnce(w, first!);
    expect(one.exported).toBe(0);
    expect(netSpent(w)).toBe(0);
    w.service.grant(EMAIL, 200);
    // Run 2 over the other folder, at most 20: before, the first folder's four photos (no
    // ceiling of their own) were started beside it, 16 more than the run's ceiling allowed.
    const two = await runOnce(w, second!, { maxDiamonds: 20 });
    expect(netSpent(w)).toBeLessThanOrEqual(20);
    expect(netSpent(w)).toBe(two.diamondsSpent);
    expect(two.exported).toBeGreaterThan(0);
    // The first folder's own run takes its photos over and pays for them once.
    const before = netSpent(w);
    const three = await runOnce(w, first!);
    expect(three.exported).toBe(4);
    expect(netSpent(w) - before).toBe(16);
  }, 120_000);

  it("a closed day's probe is not spent on another folder's photo waiting for its own run", async () => {
    const w = await world({});
    const [first, second] = await photoFolders(w, [4, 3]);
    await runOnce(w, first!);
    w.service.grant(EMAIL, 200);
    // Once run 2's first photo is submitted, other users of the key take the rest of the day; the
    // cap is raised a moment later, which only a probe finds. Before, the first folder's photos
    // (listed first) took each probe's one request and were then skipped as another batch's:
    // nothing was ever sent and the run waited on.
    let reopen: NodeJS.Timeout | undefined;
    cleanups.push(() => clearTimeout(reopen));
    const closeTheDay = () => {
      w.service.setDailyCap(w.apiKey, w.service.requestsToday(w.apiKey));
      reopen = setTimeout(() => w.service.setDailyCap(w.apiKey, 500), 1000);
    };
    const two = await runOnce(w, second!, {
      wait: { capProbeMs: 200 },
      afterCreate: { n: 1, fn: closeTheDay },
    });
    expect(two.exported).toBe(3);
    expect(netSpent(w)).toBe(12);
  }, 60_000);
});
