/**
 * The wall clock stepped back an hour while jobs process (an NTP correction, a hand-set clock):
 * each job's next poll was planned on the old clock, so polling stopped for the size of the step
 * (review rev17 C1: 24 charged, 0 exported, killed at 300 s). A job whose row was written "after"
 * now is polled at once, and the run collects every paid job. Against the reference /v1 service;
 * the studio's clock is the engine's own (`now`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runToldOnWorld, stopAfter } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'clock-back@ref.test';
const HOUR = 3_600_000;

describe('the clock stepped back an hour while jobs process', () => {
  it('polls the jobs on the new clock: every photo delivered, each paid once', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      photos: 3,
      service: { seed: 21, timeScale: 0.05, jobSeconds: [20, 40] },
    });
    let shift = 0;
    const { summary } = await runToldOnWorld(w, {
      engine: { now: () => new Date(Date.now() + shift) },
      // Once a job processes (its next poll planned on the old clock), the clock goes back.
      onTick: (items) => {
        if (shift === 0 && items.some((i) => i.state === 'processing')) shift = -HOUR;
      },
      signal: stopAfter(cleanups, 60_000),
    });
    expect(shift).toBe(-HOUR);
    expect(summary.interrupted).toBeUndefined();
    expect(summary.exported).toBe(3);
    expect([summary.held, summary.failed, summary.uncertain]).toEqual([[], [], []]);
    expect(w.service.jobs(EMAIL)).toHaveLength(3);
    expect(chargedTo(w.service, EMAIL)).toBe(3);
    // Charges timed on the new clock can fall before the opening read timed on the old one: the
    // spend may then be estimated above the ledger (the safe side), never below it.
    expect(summary.diamondsSpent).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
