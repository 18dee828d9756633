/**
 * `Retry-After` read as RFC 9110 10.2.3 has it: delay-seconds (a non-negative whole number) or an
 * HTTP-date; anything else is absent. V8's Date.parse reads '-1' and '0.5' as dates in 2001 and
 * 2000, which made them "retry now" (rev15 J2).
 */
import { describe, expect, it } from 'vitest';
import { httpDate, retryAfterFrom } from '../../src/client/failure';

const NOW = Date.parse('2026-11-27T18:00:00Z');
const read = (value: string, date?: string) =>
  retryAfterFrom(new Headers({ 'retry-after': value, ...(date ? { date } : {}) }), NOW);

describe('Retry-After', () => {
  it('delay-seconds, 0 included', () => {
    expect(read('0')).toBe(0);
    expect(read('5')).toBe(5000);
    expect(read(' 120 ')).toBe(120_000);
  });

  it('anything but delay-seconds or an HTTP-date is absent', () => {
    for (const value of ['-1', '0.5', '1e3', '+5', '5s', 'soon', '2026-11-27T18:00:05Z', '1/1'])
      expect(read(value), value).toBeNull();
  });

  it("an HTTP-date in its three forms, against the answer's Date when it has one", () => {
    expect(read('Fri, 27 Nov 2026 18:00:30 GMT')).toBe(30_000);
    expect(read('Friday, 27-Nov-26 18:00:30 GMT')).toBe(30_000);
    expect(read('Fri Nov 27 18:00:30 2026')).toBe(30_000);
    expect(read('Fri, 27 Nov 2026 18:00:30 GMT', 'Fri, 27 Nov 2026 18:00:20 GMT')).toBe(10_000);
    // A date already past: now.
    expect(read('Fri, 27 Nov 2026 17:00:00 GMT')).toBe(0);
  });

  it('an HTTP-date with fields out of range is no date', () => {
    expect(httpDate('Tue, 31 Feb 2026 10:00:00 GMT')).toBeNull();
    expect(httpDate('Fri, 27 Nov 2026 25:00:00 GMT')).toBeNull();
    expect(httpDate('Fri, 27 Nov 2026 18:00:00 UTC')).toBeNull();
  });
});
