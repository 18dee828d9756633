/**
 * `run` started when the service's daily cap is already reached (other users of the key took the
 * rest of the day): the daily-cap 429 the budget's own reads get (the price list, the balance)
 * closes the studio's day as any step's does, so nothing more is asked of the service that day
 * (each refused request is counted against the key). Against the reference /v1 service (written
 * from the spec alone) through `run`'s own path; requests are counted by the service.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { priceWorlds, photoFolders, runOnce, withEngine } from './helpers/price-reading-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'capped-start@ref.test';
const { world } = priceWorlds(cleanups, EMAIL, 200);

describe("a run started at the service's daily cap", () => {
  it.each([
    ["naming its number (the spec's words)", undefined],
    ['naming no number', 'Daily request cap reached for this key'],
  ])(
    '%s: its first refused read closes the day; no read is asked again, nothing is said left',
    async (_, dailyCapMessage) => {
      const w = await world(dailyCapMessage ? { dailyCapMessage } : {});
      const [first, second] = await photoFolders(w, [1, 2]);
      await runOnce(w, first!);
      // Other users of the key take the rest of the day.
      w.service.setDailyCap(w.apiKey, w.service.requestsToday(w.apiKey));
      const before = w.service.requestsToday(w.apiKey);
      const summary = await runOnce(w, second!);
      const sent = w.service.requestsToday(w.apiKey) - before;
      // Before: the price read, the balance read and 4 more balance reads, all refused (6), and
      // the notice said "requests left today: 493 of 500".
      expect(sent).toBe(1);
      expect(summary.exported).toBe(0);
      expect(summary.held.map((h) => h.reason)).toEqual([
        expect.stringMatching(/daily request cap/i),
        expect.stringMatching(/daily request cap/i),
      ]);
      expect(summary.notices).toContainEqual(
        expect.stringMatching(
          /^no requests left today \(the service refused one: Daily request cap (of \d+ )?reached.*\): 0 of 2 photo\(s\) fit today$/,
        ),
      );
      expect((summary.notices ?? []).join('\n')).not.toMatch(/requests left today: \d+ of/);
    },
    90_000,
  );

  it('refused at the price read, naming its number: the cap is remembered for the request budget', async () => {
    const w = await world({});
    const [first, second] = await photoFolders(w, [1, 2]);
    await runOnce(w, first!);
    const cap = w.service.requestsToday(w.apiKey);
    w.service.setDailyCap(w.apiKey, cap);
    const before = w.service.requestsToday(w.apiKey);
    await runOnce(w, second!);
    // Only the price read went out (refused, "Daily request cap of N reached for this key").
    expect(w.service.requestsToday(w.apiKey) - before).toBe(1);
    // Before: forgotten (a balance read's or a step's 429 was remembered, the price list's not):
    // the request budget planned with the configured 500.
    const today = await withEngine(w, (e) => e.spending.requestsToday(), undefined, false);
    expect(today.cap).toBe(cap);
    expect(today.serviceCapNamedOn).not.toBeNull();
  }, 60_000);

  it.each([
    ['at the price read', 0, undefined],
    ['at the balance read, the price list answered', 1, undefined],
    ['at the balance read under a ceiling', 1, 20],
  ])(
    'closed %s, then raised: the probe that is answered reopens the day and run --wait goes on',
    async (_, answered, maxDiamonds) => {
      const w = await world({});
      const [first, second] = await photoFolders(w, [1, 2]);
      await runOnce(w, first!);
      w.service.setDailyCap(w.apiKey, w.service.requestsToday(w.apiKey) + answered);
      const raise = setTimeout(() => w.service.setDailyCap(w.apiKey, 500), 1000);
      cleanups.push(() => clearTimeout(raise));
      // Before: the 429 named the cap, so today's request budget had no room for a photo, and the
      // probe went to a photo that then could not send it: the run waited for 00:00 UTC.
      const summary = await runOnce(w, second!, {
        wait: { capProbeMs: 200 },
        ...(maxDiamonds ? { maxDiamonds } : {}),
      });
      expect(summary.exported).toBe(2);
    },
    60_000,
  );
});
