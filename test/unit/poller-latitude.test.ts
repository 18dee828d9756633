/**
 * What a poll answer means when the service uses the spec's latitude (statuses it does not show,
 * pack counters of a whole set for a subset, results that lag a `completed`), and how far apart a
 * job stuck at the service is polled.
 */
import { describe, expect, it } from 'vitest';
import {
  jobOutcome,
  maxPollsFor,
  NOT_FOUND_GRACE_MS,
  notFoundPollAtMs,
  Poller,
  resultsOwed,
} from '../../src/studio/poller';
import { scratchStudioDb } from '../support/scratch-studio-db';

type Answer = Parameters<typeof jobOutcome>[0];
const answer = (fields: Partial<Record<keyof Answer, unknown>>): Answer =>
  ({ id: 'j', resultUrls: [], errorMessage: null, ...fields }) as Answer;

describe('jobOutcome under the spec latitude', () => {
  it('a status the spec does not show, with no results, is a job still running (never a refund)', () => {
    for (const status of ['pack_queued', 'PROCESSING', 'in_progress', 'Pending', 'waiting', ''])
      expect(jobOutcome(answer({ status, packTotal: null }))).toEqual({ kind: 'running' });
  });

  it("only the spec's failed (and a status naming the refund) is failed, refunded", () => {
    for (const status of ['failed', 'pack_failed', 'FAILED', 'refunded'])
      expect(jobOutcome(answer({ status, errorMessage: 'boom' }))).toEqual({
        kind: 'failed',
        message: 'boom',
      });
  });

  it('a job ended under a word the spec does not name is empty (may be charged), never refunded', () => {
    for (const status of [
      'expired',
      'cancelled',
      'canceled',
      'error',
      'errored',
      'rejected',
      'timed_out',
      'timeout',
      'timedout',
      'aborted',
      'terminated',
      'killed',
      'failure',
      'EXPIRED',
    ]) {
      const outcome = jobOutcome(answer({ status, errorMessage: 'boom' }));
      expect(outcome.kind).toBe('empty');
      expect(outcome).toMatchObject({
        message: expect.stringMatching(new RegExp(`${status} \\(boom\\).*may have been charged`)),
      });
    }
  });

  it('a status that only mentions failure is a job still running, never refunded', () => {
    for (const status of ['retrying_after_error', 'failover', 'cancel_requested', 'error_recovery'])
      expect(jobOutcome(answer({ status, errorMessage: 'transient' }))).toEqual({
        kind: 'running',
      });
  });

  it('a word saying work goes on is running whatever it lists; any other word listing results is final', () => {
    // rev23 N2: a preview listed under an in-progress word was taken for the result.
    for (const status of [
      'finalizing',
      'RENDERING',
      'generating',
      'in_progress',
      'queued',
      'partial',
    ])
      expect(jobOutcome(answer({ status, resultUrls: ['u1'] })).kind, status).toBe('running');
    // rev24 R1: read as running, a job that ended under these was polled until the give-up.
    for (const status of ['complete', 'Ready', 'ok', 'pack_complete', 'completed_with_errors'])
      expect(jobOutcome(answer({ status, resultUrls: ['u1'] })).kind, status).toBe('delivered');
    // Shots still outstanding: not the end yet.
    expect(
      jobOutcome(answer({ status: 'ready', resultUrls: ['u1'], packTotal: 3, packCompleted: 1 }))
        .kind,
    ).toBe('running');
  });

  it("a catalog job's counters decide its end under the spec's running words (rev27 D5)", () => {
    // Every shot done and the completed ones listed: delivered (partial when one failed).
    const done = { resultUrls: ['u1', 'u2', 'u3'], packTotal: 3, packCompleted: 3, packFailed: 0 };
    for (const status of ['pack_processing', 'processing', 'PACK_PROCESSING'])
      expect(jobOutcome(answer({ ...done, status })).kind, status).toBe('delivered');
    // A word of the service's own that says work goes on rules over counters that read done: it
    // may list previews while the finals are made (rev29 D1: the previews were exported).
    for (const status of [
      'pack_finalizing',
      'finalizing',
      'upscaling',
      'rendering',
      'preview',
      'retrying_after_error',
      'pack_retrying',
    ])
      expect(jobOutcome(answer({ ...done, status })).kind, status).toBe('running');
    expect(
      jobOutcome(
        answer({
          status: 'pack_processing',
          resultUrls: ['u1', 'u2'],
          packTotal: 3,
          packCompleted: 2,
          packFailed: 1,
        }),
      ).kind,
    ).not.toBe('running');
    // Shots outstanding, or done but not all listed yet: still running.
    expect(jobOutcome(answer({ ...done, status: 'pack_processing', packCompleted: 2 })).kind).toBe(
      'running',
    );
    expect(
      jobOutcome(answer({ ...done, status: 'pack_processing', resultUrls: ['u1'] })).kind,
    ).toBe('running');
    expect(jobOutcome(answer({ ...done, status: 'pack_processing', resultUrls: [] })).kind).toBe(
      'running',
    );
  });

  it('a final answer leaving places of its results empty, with no counters, owes them (partial)', () => {
    // rev24 R2: outputs a service listed as null at completed and filled in seconds later were
    // read as failed and never collected. Asked again a few times, then exported without them.
    expect(
      jobOutcome(answer({ status: 'completed', resultUrls: ['u1'], emptyPlaces: 3 })),
    ).toMatchObject({ kind: 'partial', listed: 1, completed: 4 });
    // The service's counters say what was made: they stand.
    expect(
      jobOutcome(
        answer({
          status: 'completed',
          resultUrls: ['u1', 'u3'],
          emptyPlaces: 1,
          packTotal: 3,
          packCompleted: 2,
          packFailed: 1,
        }),
      ).kind,
    ).toBe('delivered');
  });

  it('known statuses are read whatever their case', () => {
    expect(jobOutcome(answer({ status: 'COMPLETED', resultUrls: ['u'] }))).toEqual({
      kind: 'delivered',
    });
    expect(jobOutcome(answer({ status: 'Pack_Processing', resultUrls: ['u'] }))).toEqual({
      kind: 'running',
    });
  });

  it('a final status is final whatever the counters say (a subset reporting the set count)', () => {
    expect(
      jobOutcome(
        answer({
          status: 'pack_completed',
          resultUrls: ['u1'],
          packTotal: 3,
          packCompleted: 1,
          packFailed: 0,
        }),
      ),
    ).toEqual({ kind: 'delivered' });
  });

  it('a final status listing fewer results than it completed is partial (results lag), asked again', () => {
    expect(
      jobOutcome(
        answer({
          status: 'pack_completed',
          resultUrls: ['u1'],
          packTotal: 3,
          packCompleted: 3,
          packFailed: 0,
        }),
      ),
    ).toMatchObject({ kind: 'partial', listed: 1, completed: 3 });
    // Shots that failed are not results to wait for; a job without counters is as it says.
    expect(
      jobOutcome(
        answer({
          status: 'pack_completed',
          resultUrls: ['u1'],
          packTotal: 3,
          packCompleted: 1,
          packFailed: 2,
        }),
      ).kind,
    ).toBe('delivered');
    expect(jobOutcome(answer({ status: 'completed', resultUrls: ['u1'] })).kind).toBe('delivered');
  });

  it('pack_failed and a final word under another name listing fewer results than completed are partial', () => {
    // Before: both were delivered at once, 2 paid shots of 3 never asked for again.
    for (const status of ['pack_failed', 'succeeded'])
      expect(
        jobOutcome(
          answer({
            status,
            resultUrls: ['u1'],
            packTotal: 3,
            packCompleted: 2,
            packFailed: 1,
          }),
        ),
      ).toMatchObject({ kind: 'partial', listed: 1, completed: 2 });
  });

  it('a service whose packCompleted counts failed shots too (completed + failed > total) owes completed - failed', () => {
    // 3 of 3 "completed", 1 of them failed: the 2 listed are the whole; 1 listed is partial.
    const job = { status: 'pack_completed', packTotal: 3, packCompleted: 3, packFailed: 1 };
    expect(jobOutcome(answer({ ...job, resultUrls: ['u1', 'u2'] })).kind).toBe('delivered');
    expect(
      jobOutcome(answer({ ...job, status: 'pack_failed', resultUrls: ['u1', 'u2'] })).kind,
    ).toBe('delivered');
    expect(jobOutcome(answer({ ...job, resultUrls: ['u1'] }))).toMatchObject({
      kind: 'partial',
      completed: 2,
    });
    expect(resultsOwed({ packTotal: 3, packCompleted: 2, packFailed: 1 })).toBe(2);
    expect(resultsOwed({ packTotal: null, packCompleted: 2, packFailed: null })).toBe(2);
  });

  it('a subset reported with the whole set as packTotal owes completed - failed when no more than the shots asked', () => {
    // 2 shots asked of a 3-shot set, packTotal 3; packCompleted 2 counts the failed one.
    const job = { status: 'pack_completed', packTotal: 3, packCompleted: 2, packFailed: 1 };
    expect(resultsOwed(job, 2)).toBe(1);
    expect(jobOutcome(answer({ ...job, resultUrls: ['u1'] }), 2).kind).toBe('delivered');
    // 3 asked of a 5-shot set, 1 failed and counted in packCompleted 3: 2 owed.
    expect(resultsOwed({ packTotal: 5, packCompleted: 3, packFailed: 1 }, 3)).toBe(2);
    // A count past the shots asked is not trusted: the shots asked less the failed ones.
    expect(resultsOwed({ packTotal: 6, packCompleted: 6, packFailed: 1 }, 3)).toBe(2);
    // The whole set asked (packTotal = shots asked), and unknown shots asked: as before.
    expect(resultsOwed(job, 3)).toBe(2);
    expect(resultsOwed(job)).toBe(2);
    expect(jobOutcome(answer({ ...job, resultUrls: ['u1'] })).kind).toBe('partial');
  });

  it('completed with no results is empty (paid), not failed', () => {
    expect(jobOutcome(answer({ status: 'completed' })).kind).toBe('empty');
    expect(
      jobOutcome(
        answer({ status: 'pack_completed', packTotal: 3, packCompleted: 0, packFailed: 1 }),
      ).kind,
    ).toBe('empty');
    // The spec: a catalog job whose every shot failed is refunded as a whole.
    expect(
      jobOutcome(
        answer({ status: 'pack_completed', packTotal: 2, packCompleted: 0, packFailed: 2 }),
      ).kind,
    ).toBe('failed');
  });
});

describe('a failure status whose counters show shots made', () => {
  it('is empty (paid, those shots charged), not failed; with none completed it is failed', () => {
    const job = { status: 'failed', errorMessage: '1 of 3 shots failed', packTotal: 3 };
    expect(jobOutcome(answer({ ...job, packCompleted: 2, packFailed: 1 }))).toMatchObject({
      kind: 'empty',
      paidShots: 2,
    });
    expect(jobOutcome(answer({ ...job, packCompleted: 0, packFailed: 3 })).kind).toBe('failed');
    expect(jobOutcome(answer({ status: 'pack_failed', errorMessage: 'boom' })).kind).toBe('failed');
  });

  it('a final answer dropping its counters is paid when an earlier poll showed shots completed', () => {
    // Review rev7 (catfailc.sh): 2 of 3 shots were seen done, then `failed` with no counters, or
    // with packTotal and packFailed only: read as refunded, every rerun paid again.
    const bare = answer({ status: 'failed', errorMessage: 'shot 3 failed' });
    expect(jobOutcome(bare, 3, 2)).toMatchObject({ kind: 'empty', paidShots: 2 });
    const noCompleted = answer({ status: 'failed', packTotal: 3, packFailed: 1 });
    expect(jobOutcome(noCompleted, 3, 2)).toMatchObject({ kind: 'empty', paidShots: 2 });
    // Nothing ever seen completed: the spec's refund of a job whose every shot failed.
    expect(jobOutcome(bare, 3, 0).kind).toBe('failed');
  });

  it("a subset reported with the whole set's packTotal is paid for the shots it made", () => {
    // Review rev7 (catfailsub.sh): shots s1, s2 of a 3-shot set; s1 made, s2 failed.
    const job = { status: 'failed', packTotal: 3, packCompleted: 1, packFailed: 1 };
    expect(jobOutcome(answer(job), 2)).toMatchObject({ kind: 'empty', paidShots: 1 });
    // packCompleted counting the failed shots too, every shot failed: past both totals, refunded.
    expect(jobOutcome(answer({ ...job, packCompleted: 2, packFailed: 2 }), 2).kind).toBe('failed');
    expect(
      jobOutcome(answer({ status: 'failed', packTotal: 3, packCompleted: 3, packFailed: 3 }), 3)
        .kind,
    ).toBe('failed');
    // ...and with one shot made: completed - failed.
    expect(
      jobOutcome(answer({ status: 'failed', packTotal: 3, packCompleted: 3, packFailed: 1 }), 3),
    ).toMatchObject({ kind: 'empty', paidShots: 2 });
  });
});

describe('poll gaps of a job stuck at the service', () => {
  const poller = () => {
    const db = scratchStudioDb('poller');
    return new Poller(db);
  };
  const pollsWithin = (p: Poller, sparse: boolean, ms: number) => {
    let at = p.firstPollDelayMs('remove_background', sparse, { remote: true });
    let polls = 1;
    for (;;) {
      const gap = p.nextGapMs('remove_background', at, sparse);
      expect(gap).toBeGreaterThanOrEqual(Math.min(60 * 60_000, at / 4));
      at += gap;
      if (at > ms) return polls;
      polls++;
    }
  };

  it('are at least a quarter of its age: few polls an hour, a bounded share of the day', () => {
    for (const sparse of [false, true]) {
      const p = poller();
      expect(pollsWithin(p, sparse, 3_600_000)).toBeLessThanOrEqual(40);
      // From its second hour on, about a tenth of a 500-request day at most.
      expect(pollsWithin(p, sparse, 86_400_000) - pollsWithin(p, sparse, 3_600_000)).toBeLessThan(
        50,
      );
    }
  });

  it('maxPollsFor stays an upper bound of the schedule', () => {
    const p = poller();
    for (const ms of [10_000, 300_000, 3_600_000, 86_400_000])
      expect(pollsWithin(p, false, ms)).toBeLessThanOrEqual(maxPollsFor(ms));
  });
});

describe('a job not found right after its submission', () => {
  it('is asked again a few times within a minute of the create, then taken as not found', () => {
    const submitted = Date.parse('2026-01-01T10:00:00Z');
    let at = submitted + 800;
    const polls = [at];
    for (let next = notFoundPollAtMs(submitted, at); next !== null;) {
      polls.push(next);
      at = next;
      next = notFoundPollAtMs(submitted, at);
    }
    expect(polls.length).toBeGreaterThanOrEqual(4);
    expect(polls.length).toBeLessThanOrEqual(8);
    expect(polls.at(-1)! - submitted).toBeGreaterThanOrEqual(NOT_FOUND_GRACE_MS);
    expect(notFoundPollAtMs(submitted, submitted + NOT_FOUND_GRACE_MS)).toBeNull();
  });
});
