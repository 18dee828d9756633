/**
 * When to poll each job, and what a poll's answer means.
 *
 * A job waiting for its next poll holds no concurrency slot: the scheduler wakes it when its
 * `poll_at` is due. The first poll is aimed at the moment most jobs of the tool are done, from
 * the observed job times (a bounded window, robust to outliers); later polls come at a fraction
 * of the typical time, so collection follows completion closely without spending many requests.
 */
import type { GenerationBody } from '../shared/api';
import type { StudioDB } from './db/open';
import { typicalJobMs } from './poll';

type Job = Omit<GenerationBody, 'success'>;

/**
 * What a poll answer means for the photo. Only the service's word decides money: the spec's
 * `failed` with no shots made (it refunded the charge) is the one answer that lets the photo be
 * paid for again (a job ended under another word, `expired` or `cancelled`, is `empty`: it may
 * have been charged), and a final status is final whatever `packTotal` says (a subset of a ready
 * shoot may report the set's full count). One listing fewer results than it owes (`resultsOwed`; a failure
 * status with results too) is `partial`: the runner asks again
 * a few times for the rest, then collects what is listed and holds the photo until the same job
 * lists the rest. A final status with no results, or a failure status with none whose counters
 * show shots made (charged: spec 3.2), is `empty`: the runner asks again a few times, then holds
 * the photo as paid without results (never refunded). Any other status, one the spec does not show
 * included (`pack_queued`, `PROCESSING`, `in_progress`, `finalizing`…), is a job still running,
 * whatever it lists.
 */
export type JobOutcome =
  | { kind: 'running' }
  | { kind: 'delivered' }
  | { kind: 'failed'; message: string }
  /** `paidShots`: shots the counters show made (and charged) under a failure status. */
  | { kind: 'empty'; message: string; paidShots?: number }
  | { kind: 'partial'; message: string; listed: number; completed: number };

/**
 * The spec's `completed`, its catalog `pack_` form, and whole words that can only mean the job
 * succeeded (Replicate's `succeeded`). A word merely near the end (`finalizing`, `rendering`) is
 * not one of them: the job is still running, whatever it lists (review rev23 N2).
 */
const FINAL_STATUSES = new Set([
  'completed',
  'pack_completed',
  'succeeded',
  'success',
  'done',
  'finished',
]);
/**
 * The spec's `failed` (its catalog `pack_` form too) and a status that names the refund: the only
 * words that say the charge was refunded (spec 3.1: "charged diamonds refunded automatically").
 */
const REFUNDED_STATUSES = new Set(['failed', 'pack_failed', 'refunded']);
/**
 * Whole words other services end a job with, none of them the spec's: the job is over, but the
 * spec refunds only `failed`, so its charge may stand. With no results the photo is held as paid
 * (`empty`), never submitted again on its own: read as refunded, it would be paid for again.
 * Read as running instead, it was polled until `--give-up-after` (`timeout`: 30 min and 102
 * requests for 3 photos, review rev17 T1). A status that only mentions failure (`retrying_after_error`, `cancel_requested`, `failover`) is a
 * job still running.
 */
const ENDED_UNREFUNDED_STATUSES = new Set([
  'failure',
  'error',
  'errored',
  'cancelled',
  'canceled',
  'rejected',
  'expired',
  'timed_out',
  'timeout',
  'timedout',
  'aborted',
  'terminated',
  'killed',
]);

export function isFinalStatus(status: unknown): boolean {
  return FINAL_STATUSES.has(String(status).toLowerCase());
}

/** Whether a status is one of the words that say the charge was refunded (`REFUNDED_STATUSES`). */
export function namesRefund(status: unknown): boolean {
  return REFUNDED_STATUSES.has(String(status).toLowerCase());
}

/**
 * `shotsAsked`: the shots the submission asked for, when known (`resultsOwed`). `completedSeen`:
 * the most shots an earlier poll of the job showed completed (a final answer may drop counters).
 */
export function jobOutcome(
  job: Job,
  shotsAsked: number | null = null,
  completedSeen = 0,
): JobOutcome {
  const status = String(job.status);
  const urls = Array.isArray(job.resultUrls) ? job.resultUrls : [];
  const total = typeof job.packTotal === 'number' ? job.packTotal : null;
  const completed = job.packCompleted ?? 0;
  const failedShots = job.packFailed ?? 0;
  if (ENDED_UNREFUNDED_STATUSES.has(status.toLowerCase())) {
    if (urls.length > 0) return listedOutcome(status, urls.length, job, shotsAsked);
    return {
      kind: 'empty',
      message: `the service ended the job as ${status}${job.errorMessage ? ` (${job.errorMessage})` : ''} with no results, a status the spec does not name: it refunds only failed, so the job may have been charged`,
    };
  }
  if (REFUNDED_STATUSES.has(status.toLowerCase())) {
    // Shots a catalog job made before it failed are kept (partial failures are not refunded).
    if (urls.length > 0) return listedOutcome(status, urls.length, job, shotsAsked);
    // Spec 2.3 lists no results for a failed job, yet its counters may show shots made: those are
    // charged (spec 3.2), so the job is paid without results, never a refund to submit again for.
    const paidShots = shotsMadeBeforeFailing(job, shotsAsked, completedSeen);
    if (paidShots > 0)
      return {
        kind: 'empty',
        message: `the service reported the job as ${status}${job.errorMessage ? ` (${job.errorMessage})` : ''} with no results, yet ${paidShots} shot(s) completed (partial failures are not refunded)`,
        paidShots,
      };
    return {
      kind: 'failed',
      message: job.errorMessage ?? `the service reported the job as ${status}`,
    };
  }
  if (isFinalStatus(status)) {
    if (urls.length > 0) return listedOutcome(status, urls.length, job, shotsAsked);
    // The spec: a catalog job whose every shot failed is refunded as a whole.
    if (total !== null && total > 0 && completed === 0 && failedShots >= total)
      return {
        kind: 'failed',
        message: job.errorMessage ?? `every shot of the job failed (${failedShots} of ${total})`,
      };
    return {
      kind: 'empty',
      message: `the service reported the job as ${status} with no results`,
    };
  }
  // A catalog job's final status is not shown (spec 3.2): its counters are. Every shot counted
  // done and the completed ones listed is the end under the spec's own running words: read by
  // its word (`pack_processing` kept), the paid shots were polled until the give-up, every run,
  // and never collected (review rev27 D5). A word of its own that says work goes on
  // (`pack_finalizing`, `retrying`) still rules: its counters may be done while it lists
  // previews, which were exported in place of the finals (review rev29 D1, rev23 N2). A job
  // without counters is read by its word (below).
  if (
    SPEC_RUNNING_WORDS.has(status.toLowerCase()) &&
    total !== null &&
    total > 0 &&
    completed + failedShots >= total &&
    urls.length > 0 &&
    urls.length >= resultsOwed(job, shotsAsked)
  )
    return listedOutcome(status, urls.length, job, shotsAsked);
  // A word the spec does not name that says work goes on is a job still running, whatever it
  // lists: a preview or the outputs so far listed under `finalizing`, `rendering` or `generating`
  // were taken for the result, the real output paid and never fetched (review rev23 N2). The
  // runner keeps the word as the job's status, for the operator to see.
  if (saysWorkGoesOn(status)) return { kind: 'running' };
  // Any other word with results and no shots outstanding is a final word under another name
  // (`complete`, `ready`, `completed_with_errors`): read as running, each paid job was polled
  // until `--give-up-after`, every run, and never collected (review rev24 R1).
  if (urls.length > 0 && (total === null || completed + failedShots >= total))
    return listedOutcome(status, urls.length, job, shotsAsked);
  return { kind: 'running' };
}

/** The running words the spec names (3.1, 3.2): they say nothing beyond "not ended yet". */
const SPEC_RUNNING_WORDS = new Set(['processing', 'pack_processing']);

/** Words of a status that say the job is not done, besides those ending in -ing. */
const NOT_DONE_WORDS = new Set([
  'queued',
  'started',
  'scheduled',
  'accepted',
  'created',
  'submitted',
  'progress',
  'active',
  'busy',
  'new',
  'partial',
  'preview',
  'incomplete',
  'unfinished',
]);

/**
 * Whether a status says work goes on: one of its words ends in -ing (`processing`, `finalizing`,
 * `rendering`, `pending`, `pack_processing`) or says so (`queued`, `in_progress`, `partial`).
 */
function saysWorkGoesOn(status: string): boolean {
  return status
    .toLowerCase()
    .split(/[^a-z]+/)
    .some((word) => (word.length > 4 && word.endsWith('ing')) || NOT_DONE_WORDS.has(word));
}

/**
 * Results a finished job owes: `packCompleted`, never `packTotal` (a subset may give the whole
 * set's). A service whose `packCompleted` counts failed shots too shows it by a sum past the
 * total (completed + failed > total): there the failed ones are taken off, so a job with a failed
 * shot is not read as lagging. A `packTotal` other than the shots asked (a subset reported with
 * the whole set's total) cannot show that sum: there completed − failed is trusted only while it
 * is no more than the shots asked, else the shots asked less the failed ones. Without counters,
 * nothing beyond what is listed.
 */
export function resultsOwed(
  job: {
    packTotal?: number | null;
    packCompleted?: number | null;
    packFailed?: number | null;
  },
  shotsAsked: number | null = null,
): number {
  const completed = job.packCompleted ?? 0;
  const failed = job.packFailed ?? 0;
  const total = job.packTotal ?? null;
  if (shotsAsked !== null && total !== null && total !== shotsAsked && failed > 0) {
    const net = completed - failed;
    return Math.max(0, net <= shotsAsked ? net : shotsAsked - failed);
  }
  if (total !== null && failed > 0 && completed + failed > total) return completed - failed;
  return completed;
}

/**
 * Shots a job under a failure status made (and was charged for): only a job none of whose shots
 * was made is refunded (spec 3.2). The most completed shots seen, this answer's or an earlier
 * poll's; a `packCompleted` that counts failed shots too shows it by a sum past the total (the
 * set's, or the shots asked), and then the failed ones are taken off. A subset reported with the
 * whole set's total shows no such sum: its completed shots count as made (never read as refunded
 * when a shot was made: a rerun would pay again).
 */
function shotsMadeBeforeFailing(
  job: Job,
  shotsAsked: number | null,
  completedSeen: number,
): number {
  const completed = Math.max(job.packCompleted ?? 0, completedSeen);
  const failed = job.packFailed ?? 0;
  const totals = [job.packTotal, shotsAsked].filter((t): t is number => typeof t === 'number');
  const countsFailed =
    failed > 0 && totals.length > 0 && totals.every((t) => completed + failed > t);
  return countsFailed ? Math.max(0, completed - failed) : completed;
}

/**
 * A final answer with results: `partial` while fewer are listed than it owes (`resultsOwed`, or,
 * from a service with no counters, the places it listed, empty ones included: an output not
 * copied out yet is asked for again, one that failed is exported without after a few answers).
 */
function listedOutcome(
  status: string,
  listed: number,
  job: Job,
  shotsAsked: number | null,
): JobOutcome {
  const counted = typeof job.packCompleted === 'number' || typeof job.packFailed === 'number';
  const places = counted ? 0 : listed + (job.emptyPlaces ?? 0);
  const owed = Math.max(resultsOwed(job, shotsAsked), places);
  // Results may lag behind the counters: asked again, never collected as the whole.
  if (listed < owed)
    return {
      kind: 'partial',
      message: `the service reported the job as ${status} with ${listed} result(s) listed of ${owed} completed`,
      listed,
      completed: owed,
    };
  return { kind: 'delivered' };
}

/** Answers `completed` with no results in a row before the photo is held (the first included). */
export const EMPTY_ANSWERS_HELD_AT = 4;

/** The gap after the `seen`-th answer `completed` with no results: 2, 4, 8 s (results may lag). */
export function emptyAnswerGapMs(seen: number): number {
  return 2000 * 2 ** Math.max(0, seen - 1);
}

/**
 * Answers listing fewer results than completed shots (`partial`) in a row before what is listed is
 * collected: with `emptyAnswerGapMs`'s gaps (2, 4, 8, 16, 32 s) that is about a minute for the
 * rest to appear. A paid shot is not given up sooner than a job with none (`EMPTY_ANSWERS_HELD_AT`).
 */
export const PARTIAL_ANSWERS_COLLECTED_AT = 6;

/** How long after its submission a job the service cannot find may only be not readable yet. */
export const NOT_FOUND_GRACE_MS = 60_000;

/**
 * When to poll again a job the service answered 404 for: a job it accepted (and charged) moments
 * ago may not be readable yet (a replica behind). Within the grace, its age again later (at
 * least 2 s: about 6 polls in all); past it, null: the job is taken as not found.
 */
export function notFoundPollAtMs(submittedAtMs: number, nowMs: number): number | null {
  const age = nowMs - submittedAtMs;
  if (age >= NOT_FOUND_GRACE_MS) return null;
  return nowMs + Math.max(2000, age);
}

const WINDOW = 20;
const MIN_MS = 300;
const MAX_MS = 15 * 60_000;
/** The spec: "most jobs finish in 10 to 60 seconds"; a remote job's first poll when nothing is known and requests are scarce. */
export const REMOTE_PRIOR_MS = 10_000;
/** The spec's longest usual job time, for keeping requests for a remote job before any time is known. */
const REMOTE_LONGEST_MS = 60_000;
/** Polls kept for one running job at most (a bound, however far off its likely time is). */
const MAX_POLLS_KEPT = 12;
/** No two polls of one job are closer than this. */
const MIN_GAP_MS = 500;
/** The smallest share of a job's elapsed time that the gap to its next poll ever is. */
const MIN_GAP_SHARE = 0.25;
/** The longest gap, reached by a job stuck for 4 hours (the spec: most jobs take 10 to 60 s). */
const MAX_STUCK_GAP_MS = 60 * 60_000;

/**
 * The most polls this schedule can make for a job collected `durationMs` after it was submitted:
 * the earliest first poll and the shortest gaps it ever uses, whatever it has learnt. Polls only
 * come later than planned on a loaded machine, never earlier, so this bounds them under any load
 * (a guard against runaway polling; how few polls it takes in practice is `npm run bench`'s).
 */
export function maxPollsFor(durationMs: number): number {
  let at = MIN_MS;
  let polls = 1;
  while (at < durationMs) {
    at += Math.min(MAX_STUCK_GAP_MS, Math.max(MIN_GAP_MS, MIN_GAP_SHARE * at));
    polls++;
  }
  return polls;
}

export type ToolTimes = { known: number; typicalMs: number; likelyDoneByMs: number };

export class Poller {
  constructor(
    private readonly db: StudioDB,
    private readonly tuning: { maxGapMs?: number } = {},
  ) {}

  /** Last observed job times of a tool, newest first (at most 20). */
  private samples(group: string): number[] {
    return (
      this.db
        .prepare(
          'SELECT ms FROM job_times WHERE job_group = ? ORDER BY at DESC, rowid DESC LIMIT ?',
        )
        .all(group, WINDOW) as { ms: number }[]
    ).map((r) => r.ms);
  }

  /** The typical (median) job time of a tool, clamped; the built-in guess before any sample. */
  typicalMs(group: string): number {
    const s = this.samples(group).sort((a, b) => a - b);
    if (s.length === 0) return typicalJobMs(group);
    return clamp(s[Math.floor((s.length - 1) / 2)]!);
  }

  /** How many job times of the tool are known. */
  sampleCount(group: string): number {
    return this.samples(group).length;
  }

  /**
   * When to poll first. With requests to spare: at the time by which about 1 job in 4 of this
   * tool was done, so the later polls (a quarter of the elapsed time apart) collect the other
   * three within about a quarter of their duration, as on a tool's first batch (a later quantile
   * let most jobs sit done until it: the same batch again took 33% instead of 15% to collect).
   * When requests are scarce: by which 9 in 10 were (about one poll per job). With no job times yet and requests scarce, a remote job waits for the spec's
   * prior (most jobs finish in 10 to 60 s), except the one `probe` job polled on the quick
   * schedule to learn the real time. Jobs already waiting keep their poll (requests come first
   * while they are scarce); jobs submitted once a time is known are aimed by it.
   */
  firstPollDelayMs(
    group: string,
    sparse = false,
    context: { remote?: boolean; probe?: boolean } = {},
  ): number {
    const s = this.samples(group).sort((a, b) => a - b);
    if (s.length === 0)
      return sparse && context.remote && !context.probe ? REMOTE_PRIOR_MS : typicalJobMs(group);
    // Too few times for a 9-in-10 quantile: a new job outlasts the longest of n with chance
    // 1/(n+1), and job times spread about sixfold (the spec's 10 to 60 s), so the longest is
    // stretched, the more the fewer they are (x5 for one, x1.4 for nine).
    if (sparse && s.length < 10) return stretchedLongest(s);
    return clamp(s[Math.min(s.length - 1, Math.floor(s.length * (sparse ? 0.9 : 0.25)))]!);
  }

  /**
   * How long a job of this tool may take, for keeping requests to collect it: the time by which 9
   * in 10 were done (past the longest while fewer than ten are known, as the sparse first poll
   * is); with none known, the spec's longest usual time for a remote job ("most jobs finish in 10
   * to 60 seconds"), the built-in guess for the embedded core.
   */
  likelyDoneByMs(group: string, remote: boolean): number {
    const s = this.samples(group).sort((a, b) => a - b);
    if (s.length === 0) return remote ? REMOTE_LONGEST_MS : typicalJobMs(group);
    if (s.length < 10) return stretchedLongest(s);
    return clamp(s[Math.floor(s.length * 0.9)]!);
  }

  /** What `pollsLeft` reads about a tool's job times (read once per tool and tick by the scheduler). */
  timesOf(group: string, remote: boolean): ToolTimes {
    return {
      known: this.sampleCount(group),
      typicalMs: this.typicalMs(group),
      likelyDoneByMs: this.likelyDoneByMs(group, remote),
    };
  }

  /**
   * Polls a running job is still expected to need, the one that sees it done included: its next
   * poll, then the gaps this schedule uses, until the job is likely done. A job already past that
   * needs one.
   */
  pollsLeft(
    times: ToolTimes,
    job: { submittedAtMs: number; nextPollAtMs: number; nowMs: number },
    sparse: boolean,
  ): number {
    const doneBy = job.submittedAtMs + times.likelyDoneByMs;
    let at = Math.max(job.nextPollAtMs, job.nowMs);
    let polls = 1;
    while (at < doneBy && polls < MAX_POLLS_KEPT) {
      at += this.gapMs(times.known, times.typicalMs, at - job.submittedAtMs, sparse);
      polls++;
    }
    return polls;
  }

  /**
   * The gap before the next poll of a job still running: a quarter of how long it has run (or of
   * the typical time), so a job is collected within about a quarter of its duration after it is
   * done; half of it when requests are scarce (all of it while the tool has no job times yet).
   */
  /**
   * `watchedMs`: how long this process has been waiting on the job (its age, or less when it was
   * submitted before this process started): the stuck-job growth counts from there, so a job
   * submitted yesterday and found still running at today's first poll is asked again soon.
   */
  nextGapMs(group: string, elapsedMs: number, sparse = false, watchedMs = elapsedMs): number {
    return this.gapMs(
      this.samples(group).length,
      this.typicalMs(group),
      elapsedMs,
      sparse,
      Math.min(watchedMs, elapsedMs),
    );
  }

  private gapMs(
    known: number,
    typicalMs: number,
    elapsedMs: number,
    sparse: boolean,
    watchedMs = elapsedMs,
  ): number {
    // Sparse with no job times yet: doubling, as the first guess may be far off either way.
    const share = sparse ? (known === 0 ? 1 : 0.5) : MIN_GAP_SHARE;
    const gap = Math.min(
      Math.max(MIN_GAP_MS, share * Math.max(elapsedMs, typicalMs)),
      this.maxGapMs(),
    );
    // Past the cap's reach gaps keep growing with the time waited, so a job stuck at the service
    // spends a bounded share of the day's requests (36 in its first hour, about 60 a day).
    return Math.min(MAX_STUCK_GAP_MS, Math.max(gap, MIN_GAP_SHARE * watchedMs));
  }

  maxGapMs(): number {
    return this.tuning.maxGapMs ?? 20_000;
  }

  /**
   * A job was seen done. It finished between the last poll that saw it running and this one: the
   * midpoint is the estimate. A sample is
   * kept only when the job was followed by this process from submission on and the interval was
   * not stretched by a gate, a pause or the process being down.
   */
  learn(
    group: string,
    input: {
      submittedAt: number;
      seenRunningAt: number | null;
      doneAt: number;
      followedSince: number;
      plannedFirstPollMs: number;
    },
  ): void {
    if (input.submittedAt < input.followedSince) return;
    const from = input.seenRunningAt ?? input.submittedAt;
    const width = input.doneAt - from;
    // Seen done at its first poll, it finished at some point before: most of the way, not halfway,
    // so the estimate shrinks slowly until some jobs are seen running again.
    let estimate =
      input.seenRunningAt === null
        ? (input.doneAt - input.submittedAt) * 0.8
        : (from + input.doneAt) / 2 - input.submittedAt;
    // While few times are known the first poll is stretched past the longest (firstPollDelayMs): a
    // job seen done there says only that it took less, so it never raises the longest (no growth).
    const known = this.samples(group);
    if (input.seenRunningAt === null && known.length > 0 && known.length < 10)
      estimate = Math.min(estimate, Math.max(...known));
    if (estimate <= 0) return;
    const slack = 1500 + this.nextGapMs(group, input.doneAt - input.submittedAt);
    const onTime =
      input.seenRunningAt === null
        ? width <= input.plannedFirstPollMs * 1.5 + slack
        : width <= estimate * 0.5 + slack;
    if (!onTime) return;
    this.db
      .prepare('INSERT INTO job_times (job_group, ms, at) VALUES (?, ?, ?)')
      .run(group, Math.round(clamp(estimate)), new Date(input.doneAt).toISOString());
    this.db
      .prepare(
        'DELETE FROM job_times WHERE job_group = ? AND rowid NOT IN (SELECT rowid FROM job_times WHERE job_group = ? ORDER BY at DESC, rowid DESC LIMIT ?)',
      )
      .run(group, group, WINDOW);
  }
}

/** The longest of few job times (sorted), stretched as `firstPollDelayMs` explains. */
function stretchedLongest(sorted: number[]): number {
  return clamp(sorted[sorted.length - 1]! * (1 + 4 / sorted.length));
}

function clamp(ms: number): number {
  return Math.min(MAX_MS, Math.max(MIN_MS, ms));
}
