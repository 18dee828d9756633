/**
 * A job answered with an in-progress word the spec does not name (`finalizing`, `rendering`,
 * `generating`) that lists a preview (spec 3.1 names processing, completed and failed only).
 * Before (review rev23 N2) a word the poller did not know, with a URL listed and no counters, was
 * read as the job's end: the preview was exported as the result, the job never polled again, the
 * real output paid and never fetched, the run ended with nothing said. Now any word but a final
 * one keeps the job running (the word kept as its status for the operator to see), and the
 * result is collected once `completed` comes. The reference service's runningAnsweredAs answers so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runToldOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('an in-progress word the spec does not name, listing a preview', () => {
  for (const status of ['finalizing', 'rendering'])
    it(`${status}: kept running, the real result collected (never the preview)`, async () => {
      const email = `running-${status}@example.com`;
      const w = await referenceWorld(cleanups, {
        email,
        diamonds: 100,
        photos: 2,
        service: {
          seed: 9,
          timeScale: 0.2,
          jobSeconds: [20, 20],
          runningAnsweredAs: { status, fromShare: 0.05, preview: true },
        },
      });
      const words = new Set<string>();
      const { summary } = await runToldOnWorld(w, {
        giveUpAfterMs: 60_000,
        onTick: (items) => {
          for (const item of items) if (item.jobStatus) words.add(item.jobStatus);
        },
      });
      expect(chargedTo(w.service, email)).toBe(2);
      expect(summary.diamondsSpent).toBe(2);
      expect(summary.exported).toBe(2);
      // The word the service answered was kept as the job's status while it ran.
      expect(words.has(status)).toBe(true);
      // Before: both jobs' last poll saw the preview; neither was ever seen completed (collected).
      const timings = w.service.timings(email);
      expect(timings).toHaveLength(2);
      for (const t of timings) expect(t.collectedAfterMs).not.toBeNull();
    }, 90_000);
});
