/**
 * The service refuses to show paid jobs: polls answered 402 or 403 (a plan paused, expired or in
 * billing_issue gating every call; the spec names 402 for creates only and no status for a plan's
 * gate). Each photo asking on its own spent 12 requests of the day's cap per paid job, and new
 * photos went on being paid while nothing paid could be collected.
 * - One job refused is that job's trouble: it backs off alone (a job of another key, say).
 * - Two jobs refused with no poll answered between them is the account's: the gate closes. Paid
 *   jobs then wait without a request, no photo is paid for, and the engine alone asks, one job
 *   at a time, least recently asked first, backing off (`probeDelayMs`).
 * - Refused `maxRefusals` times, the paid jobs are held for the next run or a Retry; the gate
 *   stays closed and is asked every `slowProbeMs`.
 * - Only an answered poll opens it: an hour's wait that opened it by itself paid for new photos
 *   whose jobs were hidden just the same (review rev31 D3).
 */
import type { ApiError } from '../client';

export type HiddenJobsState = {
  status: number;
  /** The service's words with the last refusal. */
  message: string;
  /** Refusals since the gate closed, the one that closed it included. */
  refusals: number;
  /** The next probe is not sent before this. */
  probeAt: number;
  /** A probe is on its way. */
  probing: boolean;
  /** The refusals reached the bound: the paid jobs were held. */
  heldAt: number | null;
};

export type HiddenJobsOptions = {
  /** Wait before the probe after `refusals` refusals. */
  probeDelayMs: (refusals: number) => number;
  maxRefusals: number;
  /** Once the paid jobs are held, the gate is asked this often. */
  slowProbeMs: number;
};

export class HiddenJobs {
  state: HiddenJobsState | null = null;
  /** Jobs (their items) refused since the last answered poll. */
  private readonly refusedJobs = new Set<string>();
  /** When each job was last asked by a probe: the next probe asks the one left longest. */
  private readonly askedAt = new Map<string, number>();

  constructor(private readonly opts: HiddenJobsOptions) {}

  /**
   * A poll of a paid job refused 402 or 403: `alone` while it is the only job refused since an
   * answered poll (it backs off by itself), `gate` once the account's gate is closed.
   */
  refused(err: ApiError, itemId: string, now: number): 'alone' | 'gate' {
    this.refusedJobs.add(itemId);
    if (this.state) {
      this.state.status = err.status;
      this.state.message = err.message;
      return 'gate';
    }
    if (this.refusedJobs.size < 2) return 'alone';
    this.state = {
      status: err.status,
      message: err.message,
      refusals: 1,
      probeAt: now + this.opts.probeDelayMs(1),
      probing: false,
      heldAt: null,
    };
    return 'gate';
  }

  /** A poll answered: the service shows its jobs. */
  shown(): void {
    this.state = null;
    this.refusedJobs.clear();
    this.askedAt.clear();
  }

  /** Of the jobs that may be asked, the one to probe now; null when no probe is due. */
  probeDue(candidates: readonly string[], now: number): string | null {
    const state = this.state;
    if (!state || state.probing || now < state.probeAt || candidates.length === 0) return null;
    let pick = candidates[0]!;
    for (const id of candidates)
      if ((this.askedAt.get(id) ?? 0) < (this.askedAt.get(pick) ?? 0)) pick = id;
    state.probing = true;
    this.askedAt.set(pick, now);
    return pick;
  }

  /**
   * The probe's end: refused (402/403) counts and backs off; any other failure only backs off.
   * Returns whether the refusals just reached the bound (the paid jobs are to be held).
   */
  probeEnded(now: number, refusal: ApiError | null): boolean {
    const state = this.state;
    if (!state) return false;
    state.probing = false;
    if (refusal) {
      state.refusals++;
      state.status = refusal.status;
      state.message = refusal.message;
    }
    const reached = state.heldAt === null && state.refusals >= this.opts.maxRefusals;
    if (reached) state.heldAt = now;
    state.probeAt =
      now +
      (state.heldAt === null ? this.opts.probeDelayMs(state.refusals) : this.opts.slowProbeMs);
    return reached;
  }
}

/** The words of a paid job waiting on the gate. */
export const HIDDEN_JOBS_WAIT = 'the service refuses to show paid jobs';

export const hiddenJobsWait = (state: HiddenJobsState): string =>
  `${HIDDEN_JOBS_WAIT} (${state.status}: ${state.message}; refused ${state.refusals} time(s)); a poll costs nothing but a request of the day's cap: one paid job is asked now and then, the others wait`;

export const hiddenJobsHeld = (state: HiddenJobsState): string =>
  `the service refused to show the paid jobs ${state.refusals} times (${state.status}: ${state.message}); this one was not asked each time`;

/** Why a photo is not started while the gate is closed. */
export const hiddenJobsNotStarted = (state: HiddenJobsState): string =>
  `not started: ${HIDDEN_JOBS_WAIT} (${state.status}: ${state.message}), so a new one could not be collected either; nothing was sent for it`;
