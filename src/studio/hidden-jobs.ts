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
  /** The last refusal's words while one job alone is refused (the gate still open). */
  private suspicion: { status: number; message: string } | null = null;
  /**
   * The one new photo let go while one job alone is refused: its poll tells one job's trouble
   * (answered) from the account's (refused: the gate closes). Each photo sent meanwhile was paid
   * for with its job as hidden (review rev32 D1: 10 of 10 paid, none shown).
   */
  private trial: string | null = null;

  constructor(private readonly opts: HiddenJobsOptions) {}

  /**
   * A poll of a paid job refused 402 or 403: `alone` while it is the only job refused since an
   * answered poll (it backs off by itself), `gate` once the account's gate is closed.
   */
  refused(err: ApiError, itemId: string, now: number): 'alone' | 'gate' {
    this.refusedJobs.add(itemId);
    this.suspicion = { status: err.status, message: err.message };
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
    this.suspicion = null;
    this.trial = null;
  }

  /**
   * Paid jobs an earlier run left held by this gate (the store's words): closed from the start, a
   * probe first. A new run paid for photos in the same tick as the held jobs' refused polls
   * (review rev32 D2: 12 -> 28 charged, none shown).
   */
  closedBefore(status: number, message: string, now: number): void {
    this.state ??= { status, message, refusals: 0, probeAt: now, probing: false, heldAt: null };
  }

  /** A paid job an earlier run held as refused alone: one new photo tells whose trouble it is. */
  suspectedBefore(itemId: string, status: number, message: string): void {
    this.refusedJobs.add(itemId);
    this.suspicion ??= { status, message };
  }

  /**
   * Whether a photo not yet paid for may be sent: never while the gate is closed; while one job
   * alone is refused, only the trial photo (another once it is no longer on its way).
   */
  mayStart(itemId: string, onItsWay: (itemId: string) => boolean): boolean {
    if (this.state) return false;
    if (this.refusedJobs.size === 0) return true;
    if (this.trial !== null && this.trial !== itemId && onItsWay(this.trial)) return false;
    this.trial = itemId;
    return true;
  }

  /** The refusal photos not started wait on (the gate's, or the one job's). */
  refusal(): { status: number; message: string } | null {
    return this.state ?? this.suspicion;
  }

  /** A paid job held by the gate was taken up again (a Retry): it is asked now. */
  retried(now: number): void {
    if (this.state && !this.state.probing) this.state.probeAt = Math.min(this.state.probeAt, now);
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
    // Held once the bound is reached; after it, a refusal holds whatever a Retry took up again.
    const reached =
      state.heldAt === null ? state.refusals >= this.opts.maxRefusals : refusal !== null;
    if (reached) state.heldAt ??= now;
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

/** Why a photo is not started while the gate is closed, or while one job's refusal is tried. */
export const hiddenJobsNotStarted = (refusal: { status: number; message: string }): string =>
  `not started: ${HIDDEN_JOBS_WAIT} (${refusal.status}: ${refusal.message}), so a new one could not be collected either; nothing was sent for it`;

/** The status and words of an earlier run's hold by this gate (`hiddenJobsHeld`, or one job's). */
export const HELD_BY_HIDDEN_JOBS =
  /the service refused to show the paid (jobs?) \d+ times \((\d{3}): (.*)\)/;
