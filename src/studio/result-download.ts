/**
 * Downloads one result file of a paid job. The spec says only that results are "URLs": they may be
 * signed and expire (S3, CloudFront, GCS), so a download that outlived its URL (a CDN hiccup, a
 * stopped run, a sleeping laptop) is refused for good. Such a refusal asks the job again (one
 * poll, counted like any other) for fresh URLs, a few times per item and day; it never submits.
 * A file just listed that answers 404 or 403 is most likely not readable yet (an object store or
 * CDN catching up after the job completed, review rev15 F3): it is asked again over a window
 * before it is taken for a dead URL. What cannot be downloaded now is thrown as a
 * `ResultFileError` saying whether to ask again soon or hold the paid photo for the next run.
 */
import {
  ApiError,
  isUnnamedJob,
  UnrecognizedMediaError,
  type Download,
  type ServiceClient,
} from '../client';
import { utcDay } from '../shared/utc-day';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import { refuseAnotherJobsAnswer } from './job-answer';
import { jobOutcome, resultsOwed } from './poller';

/** Fresh URLs asked for at most this often per item and UTC day (each one poll). */
export const FRESH_URL_POLLS_PER_DAY = 3;

/** Statuses a host gives a URL that expired, was revoked or is gone: the same URL will not work again. */
const DEAD_URL_STATUSES = new Set([401, 403, 404, 410]);

/**
 * How long after the service first listed a result (`resultsListedAt`) a 404 or 403 from its file
 * is taken for a file not readable yet rather than a dead URL. Object stores and CDNs serve a new
 * object within seconds, rarely a minute: two minutes, and the run is not held much longer.
 */
export const RESULT_NOT_YET_WINDOW_MS = 2 * 60_000;

/**
 * Why a paid job's result file is not downloaded now: `not-yet` (404/403 soon after it was listed:
 * asked again until `askAgainBy`), `transient` (the connection failed, the body was cut short, the
 * host answered 5xx or 429: asked again a few times), `held` (refused for good in this run: the
 * photo stays paid and the next run, or a retry, downloads it again; nothing is paid again).
 */
export type ResultFileTrouble = 'not-yet' | 'transient' | 'held';

export class ResultFileError extends Error {
  override name = 'ResultFileError';
  constructor(
    message: string,
    readonly trouble: ResultFileTrouble,
    /** For `not-yet`: when the window ends (ms since epoch); asked again until then. */
    readonly askAgainBy: number | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

type Context = { db: StudioDB; client: ServiceClient; now: () => Date };

/**
 * Downloads result `n` of the item from the URL stored for it; a dead URL is replaced by a fresh
 * one from the job (and stored) before the single download again. A file's refusal is thrown as a
 * `ResultFileError`; a refused poll for fresh URLs as the client's error (the caller sorts both).
 */
export async function downloadResult(
  ctx: Context,
  item: store.ItemRow,
  n: number,
): Promise<Download> {
  const url = storedUrls(ctx.db, item.id)[n];
  if (url === undefined) throw new Error(`no URL is stored for result ${n + 1}`);
  try {
    return await ctx.client.download(url);
  } catch (err) {
    const until = notYetUntil(item);
    const now = ctx.now().getTime();
    if (until !== null && now < until && mayNotBeReadableYet(err))
      throw new ResultFileError(
        `${(err as Error).message} (listed ${Math.round((now - Date.parse(item.resultsListedAt!)) / 1000)} s ago: most likely not readable yet, asked again until ${new Date(until).toISOString()})`,
        'not-yet',
        until,
        { cause: err },
      );
    if (!looksDead(err) || !item.jobId) throw fileError(err);
    if (!takeFreshUrlPoll(ctx.db, item.id, ctx.now()))
      throw new ResultFileError(
        `${(err as Error).message}; fresh result URLs were already asked for ${FRESH_URL_POLLS_PER_DAY} times today, a retry tomorrow asks again (nothing is paid again)`,
        'held',
        null,
        { cause: err },
      );
    let fresh: string[];
    try {
      fresh = await freshUrls(ctx, item);
    } catch (pollErr) {
      // The poll refused (a rate limit, the daily cap, an outage): sorted like any poll's refusal.
      if (pollErr instanceof ApiError) throw pollErr;
      throw new ResultFileError((pollErr as Error).message, 'held', null, { cause: pollErr });
    }
    const again = fresh[n];
    if (again === undefined) throw fileError(err);
    try {
      return await ctx.client.download(again);
    } catch (againErr) {
      throw fileError(againErr);
    }
  }
}

/** When the not-yet-readable window of the item's results ends, or null when it is not known. */
function notYetUntil(item: Pick<store.ItemRow, 'resultsListedAt'>): number | null {
  const listed = item.resultsListedAt ? Date.parse(item.resultsListedAt) : NaN;
  return Number.isFinite(listed) ? listed + RESULT_NOT_YET_WINDOW_MS : null;
}

/**
 * A 404 or 403 that does not say the URL expired (a signed URL's expiry is dead at once), or a
 * 202/204 (the file is still being written).
 */
function mayNotBeReadableYet(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    (((err.status === 404 || err.status === 403) && !/expire/i.test(err.message)) ||
      err.status === 202 ||
      err.status === 204)
  );
}

/** A file's refusal, sorted: worth asking again soon (`transient`), or held for the next run. */
function fileError(err: unknown): unknown {
  if (err instanceof ApiError) {
    // `retryable`: a connection failure, 429 or 5xx; not a file refused for its size (download.ts).
    const transient = err.retryable;
    return new ResultFileError(err.message, transient ? 'transient' : 'held', null, { cause: err });
  }
  if (err instanceof UnrecognizedMediaError)
    return new ResultFileError(err.message, 'held', null, { cause: err });
  return err;
}

/** A refusal that says the URL itself is no good, as opposed to a host that is down for a while. */
function looksDead(err: unknown): boolean {
  if (err instanceof ApiError)
    return (
      DEAD_URL_STATUSES.has(err.status) ||
      // The host's words after the status, not the URL (a signed URL often carries `Expires=`).
      (err.status === 400 && /answered 400: .*expire/i.test(err.message))
    );
  // An object store's or CDN's error page served with 200 (an expired link's page, not a picture).
  return (
    err instanceof UnrecognizedMediaError && /an HTML page|an XML document|JSON/.test(err.message)
  );
}

/** Counts one fresh-URL poll against today's allowance; false once the allowance is spent. */
function takeFreshUrlPoll(db: StudioDB, itemId: string, now: Date): boolean {
  const key = `fresh-result-urls:${itemId}`;
  const day = utcDay(now);
  const [lastDay, count] = (store.getSetting(db, key) ?? '').split(' ');
  const used = lastDay === day ? Number(count) || 0 : 0;
  if (used >= FRESH_URL_POLLS_PER_DAY) return false;
  store.setSetting(db, key, `${day} ${used + 1}`);
  return true;
}

/**
 * Asks the job again and stores its result URLs, as long as it still lists the results stored (a
 * job collected `partial` may list more now: the rest, kept for the next download).
 */
async function freshUrls(ctx: Context, item: store.ItemRow): Promise<string[]> {
  if (isUnnamedJob(item.jobId))
    throw new Error(
      'the result URLs were refused and the job cannot be asked again: its create was answered done with its results and no job id',
    );
  const job = await ctx.client.getGeneration(item.jobId ?? '');
  refuseAnotherJobsAnswer(ctx.db, job, item.jobId ?? '');
  const old = storedUrls(ctx.db, item.id);
  const kind = jobOutcome(job, shotsAsked(item)).kind;
  // `partial`: the job lists fewer results than it completed, as when they were first stored.
  if ((kind !== 'delivered' && kind !== 'partial') || job.resultUrls.length < old.length)
    throw new Error(
      `the result URLs were refused and the job, asked again, lists ${job.resultUrls.length} result(s) where ${old.length} were stored (status ${String(job.status)})`,
    );
  // Results already stored are numbered by position: a pack that lists its shots in another order
  // would pair them with the wrong URLs. One listing more (the rest of a job collected `partial`)
  // extends the stored map as long as the shots stored come first, unchanged.
  const shotMap = job.shots?.flatMap((s) => s.resultUrls.map(() => s.shotId)) ?? null;
  const storedJson = store.getItem(ctx.db, item.id)?.shotMap ?? null;
  const stored = storedJson ? (JSON.parse(storedJson) as string[]) : null;
  if (shotMap && stored && stored.some((shot, n) => shotMap[n] !== shot))
    throw new Error(
      'the result URLs were refused and the job, asked again, lists its shots in another order',
    );
  if (shotMap && (!stored || shotMap.length > stored.length))
    store.updateItem(ctx.db, item.id, { shotMap: JSON.stringify(shotMap) }, ctx.now());
  store.updateItem(ctx.db, item.id, { resultUrls: JSON.stringify(job.resultUrls) }, ctx.now());
  return job.resultUrls;
}

/** The shots the submission asked for (`shotIds`), or null when it asked for the whole set. */
export function shotsAskedFor(item: Pick<store.ItemRow, 'submitRequest'>): string[] | null {
  if (!item.submitRequest) return null;
  try {
    const ids = (JSON.parse(item.submitRequest) as { shotIds?: unknown }).shotIds;
    return Array.isArray(ids) ? ids.map(String) : null;
  } catch {
    return null;
  }
}

export function shotsAsked(item: Pick<store.ItemRow, 'submitRequest'>): number | null {
  return shotsAskedFor(item)?.length ?? null;
}

type PartialItem = Pick<
  store.ItemRow,
  'resultUrls' | 'packTotal' | 'packCompleted' | 'packFailed' | 'submitRequest'
>;

/**
 * Results the item's job owes beyond the URLs stored (its counters as last polled, `resultsOwed`):
 * more than 0 after a `partial` collection; the same job is polled again for them (never
 * resubmitted) while `mayPollPartialAgain` allows.
 */
export function resultsMissing(item: PartialItem): number {
  const listed = (JSON.parse(item.resultUrls ?? '[]') as string[]).length;
  return Math.max(0, resultsOwed(item, shotsAsked(item)) - listed);
}

/** The shots paid for and not listed: their ids when the job names its shots, else a count. */
export function owedShotsText(
  item: PartialItem & Pick<store.ItemRow, 'shotMap' | 'failedShots'>,
  missing: number,
): string {
  const asked = shotsAskedFor(item);
  const listed = JSON.parse(item.shotMap ?? 'null') as string[] | null;
  const failed = new Set(JSON.parse(item.failedShots ?? '[]') as string[]);
  const owed = asked && listed ? asked.filter((s) => !listed.includes(s) && !failed.has(s)) : [];
  return owed.length === missing ? `shot(s) ${owed.join(', ')}` : `${missing} shot(s)`;
}

/** The runner's note on a photo collected `partial` (replaced once the rest is collected). */
export const PARTIAL_NOTE =
  /the service reported the job as \S+ with \d+ result\(s\) listed of \d+ completed after \d+ answers: collected the \d+ listed/;

/** How long after its submission a job collected `partial` is polled again for the rest. */
export const PARTIAL_KEPT_MS = 24 * 3600_000;

/** Polls for the rest of a `partial` job per item and UTC day (one per run). */
export const PARTIAL_POLLS_PER_DAY = 3;

const partialPollsKey = (itemId: string) => `partial-polls:${itemId}`;

/**
 * The note on a photo exported `partial`: what was exported, the shots still owed, and until when
 * the same job is asked for them.
 */
export function partialExportNote(
  item: PartialItem & Pick<store.ItemRow, 'shotMap' | 'failedShots'>,
  missing: number,
): string {
  const listed = (JSON.parse(item.resultUrls ?? '[]') as string[]).length;
  return `partial: ${listed} result(s) exported; ${owedShotsText(item, missing)} paid for and not listed yet: the next runs ask the same job for them (once per run, a day at most; never paid again)`;
}

/** Whether a photo's note says it was exported with results still owed (partialExportNote's). */
export const isPartialNote = (note: string | null | undefined): boolean =>
  note?.startsWith('partial: ') ?? false;

/** The note on a photo whose job will not be asked again: the shots paid and never listed. */
export function partialGivenUpNote(
  item: PartialItem & Pick<store.ItemRow, 'shotMap' | 'failedShots' | 'jobId'>,
  missing: number,
  why: string,
): string {
  const listed = (JSON.parse(item.resultUrls ?? '[]') as string[]).length;
  return `partial: ${listed} result(s) exported; ${owedShotsText(item, missing)} paid for and never listed by job ${item.jobId ?? '?'} (${why}): not asked again (ask the service about them: nothing more is paid or collected here)`;
}

/** A partial note that already names the shots given up (`partialGivenUpNote`). */
export const PARTIAL_GIVEN_UP = /never listed by job/;

/** Marks the item's job as not to be polled again for the rest (the service forgot it). */
export function givePartialUp(db: StudioDB, itemId: string): void {
  store.setSetting(db, partialPollsKey(itemId), 'given-up');
}

/**
 * Whether an item exported `partial` may have its job polled once more now: within
 * `PARTIAL_KEPT_MS` of its submission (a service keeps a job about that long), not given up, and
 * under `PARTIAL_POLLS_PER_DAY` today. A yes is counted against today's allowance. `why` says no.
 */
export function takePartialPoll(
  db: StudioDB,
  item: Pick<store.ItemRow, 'id' | 'submittedAt'>,
  now: Date,
): { ok: true } | { ok: false; why: string; final: boolean } {
  const key = partialPollsKey(item.id);
  const saved = store.getSetting(db, key) ?? '';
  if (saved === 'given-up')
    return { ok: false, why: 'the service no longer knows it', final: true };
  const age = item.submittedAt ? now.getTime() - Date.parse(item.submittedAt) : Infinity;
  if (!(age < PARTIAL_KEPT_MS))
    return { ok: false, why: 'submitted more than a day ago', final: true };
  const day = utcDay(now);
  const [lastDay, count] = saved.split(' ');
  const used = lastDay === day ? Number(count) || 0 : 0;
  if (used >= PARTIAL_POLLS_PER_DAY)
    return {
      ok: false,
      why: `asked ${PARTIAL_POLLS_PER_DAY} times today already; asked again tomorrow`,
      final: false,
    };
  store.setSetting(db, key, `${day} ${used + 1}`);
  return { ok: true };
}

export function storedUrls(db: StudioDB, itemId: string): string[] {
  return JSON.parse(store.getItem(db, itemId)?.resultUrls ?? '[]') as string[];
}

/**
 * The start of the error of a paid photo whose results could not be downloaded in this run (a file
 * refused for good, or still failing after the attempts): held, never an ordinary failure. The
 * next run (or a retry) downloads it again from the same job; nothing is paid again.
 */
export const RESULTS_HELD =
  'paid, results not collected yet (the next run collects them, nothing is paid again): ';

/** Whether an item's error says its paid results are held for the next run (`RESULTS_HELD`). */
export const isResultsHeld = (error: string | null | undefined): boolean =>
  error?.startsWith(RESULTS_HELD) ?? false;
