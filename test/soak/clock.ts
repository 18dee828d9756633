/**
 * Preloaded (`node --import tsx --import ./test/soak/clock.ts`) into the processes of a daily-cap
 * schedule, service and `run` alike: their clock reads SOAK_CLOCK_OFFSET_MS ahead, so a schedule
 * can start seconds before 00:00 UTC and a "next day" is a restart with a larger offset. Timers
 * are untouched; only what `Date` says changes, the same for every process of the schedule.
 */
const offset = Number(process.env.SOAK_CLOCK_OFFSET_MS ?? 0);

if (Number.isFinite(offset) && offset !== 0) {
  const Real = Date;
  class Shifted extends Real {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(Real.now() + offset);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return Real.now() + offset;
    }
  }
  globalThis.Date = Shifted as DateConstructor;
}

export {};
