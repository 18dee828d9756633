/**
 * The 429 rules weigh evidence before words: Retry-After, a period shorter than a day, the
 * studio's own count of today's requests, and refusals in a row with waits doubling.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/client';
import { Gates, isDailyCapRefusal } from '../../src/studio/gates';

const refusal = (message: string, retryAfterMs?: number) =>
  new ApiError(429, message, retryAfterMs === undefined ? {} : { retryAfterMs });

describe('a 429 read by evidence', () => {
  it('tells the daily cap from a rate limit whatever the words', () => {
    const today = { used: 5, cap: 500 };
    const cap = (message: string, retryAfterMs?: number) =>
      isDailyCapRefusal(refusal(message, retryAfterMs), today);
    expect(cap('Request limit of 500 reached for this API key')).toBe(true);
    expect(cap('Daily request cap of 500 reached for this key; it resets at 00:00 UTC')).toBe(true);
    expect(cap('Quota exceeded')).toBe(true);
    expect(cap('Rate limit exceeded: quota of 10 requests per second for this API key')).toBe(
      false,
    );
    expect(cap('Limit of 100 requests an hour reached for this API key')).toBe(false);
    expect(cap('Rate limit: 60/min')).toBe(false);
    expect(cap('Too many requests right now; retry after 1 seconds')).toBe(false);
    expect(cap('Too many requests, slow down')).toBe(false);
    // A short Retry-After is a rate limit, a Retry-After of hours a day's limit; but the words of
    // the cap reached win whatever the Retry-After (rev15 Q1).
    expect(cap('Daily request cap of 500 reached for this key', 5000)).toBe(true);
    expect(cap('Request limit of 30 reached for this API key', 5000)).toBe(true);
    expect(cap('Daily quota exceeded', 0)).toBe(true);
    expect(cap('Too Many Requests', 5000)).toBe(false);
    expect(cap('Daily quota: slow down', 5000)).toBe(false);
    expect(cap('Too many requests', 5 * 3_600_000)).toBe(true);
    // Between 10 min and an hour only the words of a day's cap close the day (rev14 J1).
    expect(cap('Too Many Requests', 900_000)).toBe(false);
    expect(cap('Too many jobs in progress', 30 * 60_000)).toBe(false);
    // Words of jobs at once keep it a concurrency wait whatever the Retry-After (rev15 J3).
    expect(cap('Too many concurrent jobs', 3_600_000)).toBe(false);
    expect(
      cap('Too many concurrent jobs: limit of 2 reached for this API key', 5 * 3_600_000),
    ).toBe(false);
    expect(cap('Request limit of 500 reached for this API key', 900_000)).toBe(true);
    expect(cap('Daily quota exceeded', 30 * 60_000)).toBe(true);
  });

  it("a number already reached by the studio's own count today is the day's", () => {
    expect(isDailyCapRefusal(refusal('Limit 40 hit'), { used: 39, cap: 500 })).toBe(false);
    expect(isDailyCapRefusal(refusal('Limit 40 hit'), { used: 40, cap: 500 })).toBe(true);
  });

  it('a limit on jobs at once is a rate limit, though its number is below the count of today', () => {
    const today = { used: 40, cap: 500 };
    for (const message of [
      'Too many generations in progress: limit of 2 concurrent jobs for this API key',
      'Limit of 3 jobs at a time reached for this key',
      'Job limit reached: 2 active jobs per account',
      'Maximum of 5 running jobs reached for this key',
      'Limit 4: too many queued generations',
      'Limit 2 reached; wait for one of your jobs to finish',
    ])
      expect(isDailyCapRefusal(refusal(message), today), message).toBe(false);
  });

  it("words about pending or queued requests are the day's cap once the studio's own count is at it", () => {
    const message = 'Request limit of 500 reached for this API key; pending requests are refused';
    expect(isDailyCapRefusal(refusal(message), { used: 500, cap: 500 })).toBe(true);
    expect(
      isDailyCapRefusal(refusal('Daily cap reached; 3 queued requests dropped'), {
        used: 10,
        cap: 500,
      }),
    ).toBe(true);
  });

  it('refusals in a row without Retry-After wait 2, 4, 8, 16, 32 s, then close the day', () => {
    const gates = new Gates({ rateLimitMs: 2000 });
    let now = Date.parse('2026-01-01T10:00:00Z');
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const limit = gates.tooManyRequests(refusal('Too many requests'), new Date(now));
      expect(limit.kind).toBe('rate_limit');
      // A request sent during the wait and refused tells nothing new: the wait does not grow.
      gates.tooManyRequests(refusal('Too many requests'), new Date(now + 1));
      waits.push(limit.until - now);
      now = limit.until;
    }
    expect(waits).toEqual([2000, 4000, 8000, 16_000, 32_000]);
    const sixth = gates.tooManyRequests(refusal('Too many requests'), new Date(now));
    expect(sixth).toEqual({ kind: 'daily_cap', until: Date.parse('2026-01-02T00:00:00Z') });
    expect(gates.cap?.message).toContain('read as the daily request cap');
  });

  it('an answer in between starts the waits again from 2 s', () => {
    const gates = new Gates({ rateLimitMs: 2000 });
    const now = Date.parse('2026-01-01T10:00:00Z');
    const first = gates.tooManyRequests(refusal('Too many requests'), new Date(now));
    const second = gates.tooManyRequests(refusal('Too many requests'), new Date(first.until));
    expect(second.until - first.until).toBe(4000);
    gates.apiSucceeded(second.until);
    const third = gates.tooManyRequests(refusal('Too many requests'), new Date(second.until + 10));
    expect(third.until - (second.until + 10)).toBe(2000);
  });
});

describe("a create's long rate limit holds creates only (rev14 J1)", () => {
  it('polls go on; a job of ours ending lets creates try again', () => {
    const gates = new Gates();
    const now = new Date('2026-11-27T14:00:00Z');
    const limit = gates.tooManyRequests(refusal('Too Many Requests', 900_000), now, {
      jobsInFlight: 2,
    });
    expect(limit).toMatchObject({ kind: 'rate_limit', createsOnly: true });
    // Bounded: asked again within 10 min, not after the 15 asked.
    expect(limit.until - now.getTime()).toBe(10 * 60_000);
    expect(gates.cap).toBeNull();
    expect(gates.rateLimited(now)).toBe(false);
    expect(gates.createsLimited(now)).toBe(true);
    expect(gates.jobEnded(new Date(now.getTime() + 4000))).toBe(true);
    expect(gates.createsLimited(new Date(now.getTime() + 4000))).toBe(false);
  });

  it('met with no job of ours in flight, it is waited out (bounded), not lifted by a job ending', () => {
    const gates = new Gates();
    const now = new Date('2026-11-27T14:00:00Z');
    gates.tooManyRequests(refusal('Too Many Requests', 900_000), now, { jobsInFlight: 0 });
    expect(gates.jobEnded(new Date(now.getTime() + 4000))).toBe(false);
    expect(gates.createsLimited(new Date(now.getTime() + 9 * 60_000))).toBe(true);
    expect(gates.createsLimited(new Date(now.getTime() + 10 * 60_000))).toBe(false);
  });
});
