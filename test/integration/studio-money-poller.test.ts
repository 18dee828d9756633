/**
 * The learned job time (item 8): estimated from the interval in which a job finished, bounded and
 * robust, and never stretched by pauses, gates or the process being down.
 */
import { describe, expect, it } from 'vitest';
import { jobOutcome, maxPollsFor, Poller, REMOTE_PRIOR_MS } from '../../src/studio/poller';
import { typicalJobMs } from '../../src/studio/poll';
import { scratchStudioDb } from '../support/scratch-studio-db';

function poller(): Poller {
  const db = scratchStudioDb('poller');
  return new Poller(db);
}

describe('what a poll answer means', () => {
  it('a catalog job runs while pack_processing or while shots are outstanding under an unknown status; unknown finals are tolerated', () => {
    expect(
      jobOutcome({
        id: 'j',
        status: 'pack_processing' as never,
        resultUrls: [],
        errorMessage: null,
      }),
    ).toEqual({ kind: 'running' });
    expect(
      jobOutcome({
        id: 'j',
        // A status the spec does not show: shots outstanding keep it running. A final status is
        // final whatever its counters (test/unit/poller-latitude).
        status: 'pack_partial' as never,
        resultUrls: ['u1'],
        errorMessage: null,
        packTotal: 3,
        packCompleted: 1,
        packFailed: 0,
      }),
    ).toEqual({ kind: 'running' });
    expect(
      jobOutcome({
        id: 'j',
        status: 'pack_completed' as never,
        resultUrls: ['u1', 'u2'],
        errorMessage: null,
        packTotal: 3,
        packCompleted: 2,
        packFailed: 1,
      }),
    ).toEqual({ kind: 'delivered' });
    expect(
      jobOutcome({
        id: 'j',
        status: 'pack_failed' as never,
        resultUrls: [],
        errorMessage: 'every shot failed',
        packTotal: 2,
        packCompleted: 0,
        packFailed: 2,
      }),
    ).toEqual({ kind: 'failed', message: 'every shot failed' });
    expect(
      jobOutcome({ id: 'j', status: 'failed', resultUrls: [], errorMessage: null }),
    ).toMatchObject({ kind: 'failed' });
  });
});

describe('learned job time', () => {
  it('is the midpoint of the interval in which the job finished, not submit-to-poll times 1.1', () => {
    const p = poller();
    const t0 = Date.parse('2026-01-01T10:00:00Z');
    // Seen running at 9 s, done at 11 s: finished at about 10 s.
    for (let i = 0; i < 5; i++)
      p.learn('virtual_model', {
        submittedAt: t0 + i * 60_000,
        seenRunningAt: t0 + i * 60_000 + 9000,
        doneAt: t0 + i * 60_000 + 11_000,
        followedSince: t0,
        plannedFirstPollMs: 9000,
      });
    expect(p.typicalMs('virtual_model')).toBe(10_000);
  });

  it('does not grow from repeated use: 80 jobs of 10 s keep the first poll near 10 s', () => {
    const p = poller();
    const t0 = Date.parse('2026-01-01T10:00:00Z');
    let at = t0;
    const firstPolls: number[] = [];
    for (let i = 0; i < 80; i++) {
      const first = p.firstPollDelayMs('virtual_model', true);
      firstPolls.push(first);
      const duration = 9000 + (i % 5) * 500; // 9 to 11 s
      if (first >= duration)
        p.learn('virtual_model', {
          submittedAt: at,
          seenRunningAt: null,
          doneAt: at + first,
          followedSince: t0,
          plannedFirstPollMs: first,
        });
      else
        p.learn('virtual_model', {
          submittedAt: at,
          seenRunningAt: at + first,
          doneAt: at + first + Math.max(500, 0.5 * first),
          followedSince: t0,
          plannedFirstPollMs: first,
        });
      at += 60_000;
    }
    expect(Math.max(...firstPolls.slice(20))).toBeLessThanOrEqual(13_000);
    expect(Math.min(...firstPolls.slice(20))).toBeGreaterThanOrEqual(7000);
  });

  it('leaves out a job seen done after a pause, a gate or a restart', () => {
    const p = poller();
    const t0 = Date.parse('2026-01-01T10:00:00Z');
    p.learn('remove_background', {
      submittedAt: t0,
      seenRunningAt: t0 + 2000,
      doneAt: t0 + 2600,
      followedSince: t0,
      plannedFirstPollMs: 2000,
    });
    const before = p.typicalMs('remove_background');
    // The process was down overnight: seen running before, done the next morning.
    p.learn('remove_background', {
      submittedAt: t0,
      seenRunningAt: t0 + 2000,
      doneAt: t0 + 11 * 3600_000,
      followedSince: t0,
      plannedFirstPollMs: 2000,
    });
    // Submitted by an earlier process (a resume): not followed from the start.
    p.learn('remove_background', {
      submittedAt: t0,
      seenRunningAt: null,
      doneAt: t0 + 3000,
      followedSince: t0 + 1,
      plannedFirstPollMs: 2000,
    });
    // Its first poll waited on the daily cap for an hour.
    p.learn('remove_background', {
      submittedAt: t0,
      seenRunningAt: null,
      doneAt: t0 + 3600_000,
      followedSince: t0,
      plannedFirstPollMs: 2000,
    });
    expect(p.typicalMs('remove_background')).toBe(before);
  });

  it('is bounded (at most 15 minutes) and kept per tool over the last 20 jobs', () => {
    const p = poller();
    const t0 = Date.parse('2026-01-01T10:00:00Z');
    for (let i = 0; i < 30; i++)
      p.learn('ai_videos', {
        submittedAt: t0,
        seenRunningAt: t0 + 3 * 3600_000,
        doneAt: t0 + 3 * 3600_000 + 1000,
        followedSince: t0,
        plannedFirstPollMs: 60_000,
      });
    expect(p.typicalMs('ai_videos')).toBe(15 * 60_000);
    const later = t0 + 4 * 3600_000;
    for (let i = 0; i < 20; i++)
      p.learn('ai_videos', {
        submittedAt: later + i,
        seenRunningAt: later + i + 29_000,
        doneAt: later + i + 31_000,
        followedSince: t0,
        plannedFirstPollMs: 29_000,
      });
    expect(p.typicalMs('ai_videos')).toBe(30_000);
    expect(p.typicalMs('photo_enhance')).toBe(800); // untouched by another tool's samples
  });
});

describe('first polls when nothing is known yet, and the most polls a job can take', () => {
  it("a remote tool with no job times and scarce requests waits for the spec's prior, except its probe", () => {
    const p = poller();
    expect(p.firstPollDelayMs('remove_background', true, { remote: true })).toBe(REMOTE_PRIOR_MS);
    expect(p.firstPollDelayMs('remove_background', true, { remote: true, probe: true })).toBe(
      typicalJobMs('remove_background'),
    );
    // Requests to spare, or our own core: the quick schedule.
    expect(p.firstPollDelayMs('remove_background', false, { remote: true })).toBe(
      typicalJobMs('remove_background'),
    );
    expect(p.firstPollDelayMs('remove_background', true, { remote: false })).toBe(
      typicalJobMs('remove_background'),
    );
    // One job time known (2 s): the prior is no longer used; with so few times the longest is
    // stretched while requests are scarce (x5 for one), and used as it is when they are not.
    p.learn('remove_background', {
      submittedAt: 0,
      seenRunningAt: 1000,
      doneAt: 3000,
      followedSince: 0,
      plannedFirstPollMs: 800,
    });
    expect(p.firstPollDelayMs('remove_background', true, { remote: true })).toBe(10_000);
    expect(p.firstPollDelayMs('remove_background', false, { remote: true })).toBe(2000);
  });

  it('maxPollsFor bounds the schedule: no gap the poller plans is shorter than the one it assumes', () => {
    const p = poller();
    for (const [elapsed, sparse] of [
      [0, false],
      [400, false],
      [3000, true],
      [60_000, false],
      [600_000, true],
    ] as const) {
      const gap = p.nextGapMs('remove_background', elapsed, sparse);
      expect(gap).toBeGreaterThanOrEqual(Math.min(p.maxGapMs(), Math.max(500, 0.25 * elapsed)));
    }
    expect(p.firstPollDelayMs('remove_background')).toBeGreaterThanOrEqual(300);
    expect(maxPollsFor(0)).toBe(1);
    expect(maxPollsFor(1000)).toBe(3); // 0.3, 0.8, 1.3 s
    // Grows slowly with the job's duration: about 20 polls for a 30 s job at most.
    expect(maxPollsFor(30_000)).toBeLessThan(25);
    expect(maxPollsFor(30_000)).toBeGreaterThan(maxPollsFor(10_000));
  });
});
