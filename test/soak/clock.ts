/**
 * Preloaded (`node --import tsx --import ./test/soak/clock.ts`) into the processes of a daily-cap
 * schedule, service and `run` alike: their clock reads SOAK_CLOCK_OFFSET_MS ahead, so a schedule
 * can start seconds before 00:00 UTC and a "next day" is a restart with a larger offset. Timers
 * are untouched; only what `Date` says changes, the same for every process of the schedule.
 */
import { shiftedDate } from '../support/shifted-date';

const offset = Number(process.env.SOAK_CLOCK_OFFSET_MS ?? 0);

if (Number.isFinite(offset) && offset !== 0) globalThis.Date = shiftedDate(() => offset);
