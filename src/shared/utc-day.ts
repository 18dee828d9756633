/** The UTC day (YYYY-MM-DD) that daily caps and per-day allowances are counted in. */
const DAY_MS = 86_400_000;
/** The last day formatted: every request names its UTC day, and formatting was ~3% of a poll. */
let dayStart = 0;
let dayEnd = 0;
let dayText = '';

/** The UTC day of `d` as YYYY-MM-DD. */
export function utcDay(d: Date | number): string {
  const ms = typeof d === 'number' ? d : d.getTime();
  if (!(ms >= dayStart && ms < dayEnd)) {
    dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
    dayEnd = dayStart + DAY_MS;
    dayText = new Date(dayStart).toISOString().slice(0, 10);
  }
  return dayText;
}
