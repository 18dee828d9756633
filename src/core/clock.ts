/** Time source, injectable so day boundaries (daily caps) can be tested without waiting. */
export type Clock = { now(): Date };
export const systemClock: Clock = { now: () => new Date() };
