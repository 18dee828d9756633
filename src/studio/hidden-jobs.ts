/**
 * The service refuses to show paid jobs: a poll answered 402 or 403 (a plan paused, expired or in
 * billing_issue gating every call; the spec names 402 for creates only and no status for a plan's
 * gate). The refusal is the account's, not one job's, so it is one gate: one poll at a time asks
 * again, backing off; the other paid jobs wait without a request, and no photo starts (its job
 * could not be seen either). Each photo asking on its own spent 12 requests of the day's cap per
 * paid job while the gate was up.
 * Refused `maxRefusals` times, the paid jobs are held for the next run (or a Retry) and new photos
 * wait `holdMs` more; a poll answered opens the gate at once.
 */
import type { ApiError } from '../client';

export type HiddenJobsState = {
  status: number;
  /** The service's words with the last refusal. */
  message: string;
  /** Refusals of the gate's own probes, the first refusal included. */
  refusals: number;
  /** No poll of a paid job goes out before this (one probe when it is due). */
  probeAt: number;
  /** The item whose poll is the probe in flight: only its refusal counts. */
  probeItem: string | null;
  /** Refused `maxRefusals` times: new photos wait until then. */
  heldUntil: number | null;
};

export type HiddenJobsOptions = {
  /** Wait before the probe after `refusals` refusals. */
  probeDelayMs: (refusals: number) => number;
  maxRefusals: number;
  /** After the paid jobs are held, how long new photos still wait before one may try. */
  holdMs: number;
};

export class HiddenJobs {
  state: HiddenJobsState | null = null;

  constructor(private readonly opts: HiddenJobsOptions) {}

  /**
   * A poll of a paid job refused 402 or 403. The first refusal closes the gate; after that only
   * the probe's own refusal counts (polls already in flight when it closed tell nothing new).
   * Returns whether the refusals reached the bound: the paid jobs are to be held.
   */
  refused(err: ApiError, itemId: string, now: number): boolean {
    const state = this.state ?? {
      status: err.status,
      message: err.message,
      refusals: 0,
      probeAt: now,
      probeItem: null,
      heldUntil: null,
    };
    if (this.state === null || state.probeItem === itemId) {
      state.refusals++;
      state.probeItem = null;
    }
    state.status = err.status;
    state.message = err.message;
    state.probeAt = Math.max(state.probeAt, now + this.probeDelay(state.refusals));
    this.state = state;
    const givenUp = state.refusals >= this.opts.maxRefusals;
    if (givenUp && state.heldUntil === null) state.heldUntil = now + this.opts.holdMs;
    return givenUp;
  }

  /** A poll answered: the service shows its jobs again. */
  shown(): void {
    this.state = null;
  }

  /** The gate now, or null once open (the hold after giving up over with no refusal since). */
  current(now: number): HiddenJobsState | null {
    if (this.state?.heldUntil != null && now >= this.state.heldUntil) this.state = null;
    return this.state;
  }

  /**
   * Whether `itemId`'s poll may go now: always while the gate is open; while closed, as the one
   * probe once it is due (the next probe is then planned, whatever becomes of this one).
   */
  mayPoll(itemId: string, now: number): boolean {
    const state = this.current(now);
    if (!state) return true;
    if (now < state.probeAt) return false;
    state.probeItem = itemId;
    state.probeAt = now + this.probeDelay(state.refusals);
    return true;
  }

  private probeDelay(refusals: number): number {
    // Given up, a Retried photo is still asked within the longest wait, not after the hold.
    return this.opts.probeDelayMs(Math.min(refusals, this.opts.maxRefusals));
  }
}

/** The words of a paid job waiting on the gate (kept when it is held: `isHiddenJobsWait`). */
export const HIDDEN_JOBS_WAIT = 'the service refuses to show paid jobs';

export const hiddenJobsWait = (state: HiddenJobsState): string =>
  `${HIDDEN_JOBS_WAIT} (${state.status}: ${state.message}; refused ${state.refusals} time(s)); a poll costs nothing but a request of the day's cap: one paid job is asked again now and then, the others wait`;

export const hiddenJobsHeld = (state: HiddenJobsState): string =>
  `the service refused to show the paid jobs ${state.refusals} times (${state.status}: ${state.message})`;

/** Why a photo is not started while the gate is closed. */
export const hiddenJobsNotStarted = (state: HiddenJobsState): string =>
  `not started: ${HIDDEN_JOBS_WAIT} (${state.status}: ${state.message}), so a new one could not be collected either; nothing was sent for it`;
