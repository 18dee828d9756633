/** utcDay keeps the last day it formatted; it must still name the right day on every call. */
import { describe, expect, it } from 'vitest';
import { utcDay } from '../../src/shared/utc-day';

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('utcDay', () => {
  it('names the UTC day at, just before and just after midnight, in any order of calls', () => {
    const midnight = Date.parse('2026-11-27T00:00:00.000Z');
    const moments = [
      midnight - 1,
      midnight,
      midnight - 1,
      midnight + 1,
      midnight + 86_400_000 - 1,
      midnight + 86_400_000,
      midnight - 86_400_000 * 400,
      Date.parse('1969-12-31T23:59:59.999Z'),
      Date.parse('1970-01-01T00:00:00.000Z'),
      midnight,
    ];
    for (const ms of moments)
      expect(utcDay(new Date(ms)), new Date(ms).toISOString()).toBe(iso(ms));
  });

  it('agrees with toISOString over a spread of instants', () => {
    let ms = Date.parse('2025-12-30T20:00:00.000Z');
    for (let i = 0; i < 2_000; i++) {
      ms += 3_599_999; // just under an hour, so calls walk across many midnights
      expect(utcDay(new Date(ms))).toBe(iso(ms));
    }
  });
});
