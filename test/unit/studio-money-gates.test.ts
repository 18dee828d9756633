/**
 * The 402/429 rules on the service's own words: the amount a 402 names, the daily cap told apart
 * from a rate limit, Retry-After honoured, a short balance re-read with backoff.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/client';
import { ownCapMessage } from '../../src/studio/budget';
import { Gates, isDailyCap, parseInsufficient } from '../../src/studio/gates';

describe('402 messages', () => {
  it('reads the required amount and the balance in the forms services use', () => {
    expect(parseInsufficient('Insufficient diamonds: 12 required, balance is 5')).toEqual({
      required: 12,
      balance: 5,
    });
    expect(parseInsufficient('Insufficient diamonds (required 9, balance 4)')).toEqual({
      required: 9,
      balance: 4,
    });
    expect(parseInsufficient('insufficient balance: required=15; balance held: 3')).toEqual({
      required: 15,
      balance: 3,
    });
    expect(parseInsufficient('Not enough diamonds')).toEqual({ required: null, balance: null });
  });

  it('reopens at the amount the 402 named, and re-reads the balance with growing gaps', () => {
    const gates = new Gates({ balanceRecheckMs: 1000, balanceRecheckMaxMs: 8000 });
    const t0 = new Date('2026-01-01T10:00:00Z');
    const gate = gates.shortOfDiamonds(
      new ApiError(402, 'Insufficient diamonds: 5 required, balance is 4'),
      4,
      t0,
      null,
    );
    expect(gate).toMatchObject({
      needed: 5,
      balance: 4,
      message: 'Insufficient diamonds: 5 required, balance is 4',
    });
    const due: number[] = [];
    for (let t = 0; t <= 40_000; t += 250)
      if (gates.balanceCheckDue(new Date(t0.getTime() + t))) due.push(t);
    expect(due.slice(0, 5)).toEqual([1000, 3000, 7000, 15000, 23000]);
    expect(gates.balanceRead(gate, 4)).toBe(false); // above the fallback price, under the real one
    expect(gates.balanceRead(gate, 5)).toBe(true);
    expect(gates.diamonds).toBeNull();
  });

  it("while the account's plan holds creates, only a reading above the last one opens it", () => {
    const gates = new Gates({ balanceRecheckMs: 1000 });
    const t0 = new Date('2026-01-01T10:00:00Z');
    // A 402 naming a balance below the one read (rev32 D3's 'balance 0' with 500 read): not a
    // top-up. Before: a covering balance above the named one opened it, every read.
    const gate = gates.shortOfDiamonds(
      new ApiError(402, 'Insufficient diamonds: required 4, balance 0'),
      4,
      t0,
      500,
    );
    expect(gates.balanceRead(gate, 500, true)).toBe(false);
    expect(gates.balanceRead(gate, 480, true)).toBe(false);
    expect(gates.balanceRead(gate, 480, true)).toBe(false);
    // A top-up (rev32 D5): above the last reading.
    expect(gates.balanceRead(gate, 600, true)).toBe(true);
    expect(gates.diamonds).toBeNull();
    // No reading before the 402 and none naming the balance: the first read is the baseline.
    const unnamed = gates.shortOfDiamonds(new ApiError(402, 'Plan paused'), 4, t0, null);
    expect(gates.balanceRead(unnamed, 50, true)).toBe(false);
    expect(gates.balanceRead(unnamed, 70, true)).toBe(true);
  });
});

describe('429', () => {
  it('tells the daily cap (spec form) from a rate limit', () => {
    expect(isDailyCap('Daily request cap of 500 requests reached for this API key')).toBe(true);
    expect(isDailyCap('Too many requests, slow down')).toBe(false);
  });

  it('a rate limit waits Retry-After and leaves the day open; the daily cap closes it until 00:00 UTC', () => {
    const gates = new Gates({ capProbeMs: 60_000 });
    const now = new Date('2026-01-01T10:00:00Z');
    const limited = new ApiError(429, 'Too many requests', { retryAfterMs: 3000 });
    expect(gates.tooManyRequests(limited, now)).toEqual({
      kind: 'rate_limit',
      until: now.getTime() + 3000,
    });
    expect(gates.capOpen(now)).toBe(true);
    expect(gates.rateLimited(new Date(now.getTime() + 2999))).toBe(true);
    expect(gates.rateLimited(new Date(now.getTime() + 3000))).toBe(false);

    const capped = gates.tooManyRequests(
      new ApiError(429, 'Daily request cap of 500 requests reached for this API key'),
      now,
    );
    expect(capped).toEqual({ kind: 'daily_cap', until: Date.parse('2026-01-02T00:00:00Z') });
    expect(gates.capOpen(new Date(now.getTime() + 1000))).toBe(false);
    // A raised cap is noticed by a probe within a minute, not 15.
    expect(gates.capOpen(new Date(now.getTime() + 60_000))).toBe(true);
    expect(gates.capOpen(new Date(now.getTime() + 61_000))).toBe(false);
  });

  it('a 429 without Retry-After waits the short default; one naming the cap with a short Retry-After is a rate limit', () => {
    const gates = new Gates({ rateLimitMs: 2000 });
    const now = new Date('2026-01-01T10:00:00Z');
    expect(
      gates.tooManyRequests(new ApiError(429, 'rate limited, retry after 7 seconds'), now),
    ).toEqual({ kind: 'rate_limit', until: now.getTime() + 2000 });
    expect(
      gates.tooManyRequests(
        new ApiError(429, 'Daily quota: slow down', { retryAfterMs: 5000 }),
        now,
      ),
    ).toEqual({ kind: 'rate_limit', until: now.getTime() + 5000 });
    expect(gates.cap).toBeNull();
  });
});

describe("the studio's own count at its configured cap", () => {
  it('closes the day until 00:00 UTC with no probe (no answer of the service can raise our own limit)', () => {
    const gates = new Gates({ capProbeMs: 60_000 });
    const now = new Date('2026-01-01T23:00:00Z');
    gates.ownCapReached(now, ownCapMessage(15));
    for (let t = 0; t < 3_600_000; t += 30_000)
      expect(gates.capOpen(new Date(now.getTime() + t))).toBe(false);
    expect(gates.capOpen(new Date('2026-01-02T00:00:00Z'))).toBe(true);
    expect(gates.cap).toBeNull();
  });

  it("its refusal reads as the spec's daily cap, so every caller treats it as the service's own 429", () => {
    const message = ownCapMessage(15);
    expect(isDailyCap(message)).toBe(true);
    const gates = new Gates();
    expect(
      gates.tooManyRequests(
        new ApiError(429, message, { notSent: true }),
        new Date('2026-01-01T10:00:00Z'),
      ).kind,
    ).toBe('daily_cap');
  });
});
