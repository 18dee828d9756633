/**
 * A `Date` class whose clock reads `offsetMs()` ahead of the real one: `new Date()` and
 * `Date.now()` move, a date made from a given time does not. Built on the `Date` in use now.
 */
export function shiftedDate(offsetMs: () => number): DateConstructor {
  const Real = globalThis.Date;
  class Shifted extends Real {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(Real.now() + offsetMs());
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return Real.now() + offsetMs();
    }
  }
  return Shifted as DateConstructor;
}
