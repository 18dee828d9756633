/**
 * Downloads one result file of a paid job. The spec says only that results are "URLs": they may be
 * signed and expire (S3, CloudFront, GCS), so a download that outlived its URL (a CDN hiccup, a
 * stopped run, a sleeping laptop) is refused for good. Such a refusal asks the job again (one
 * poll, counted like any other) for fresh URLs, a few times per item and day; it never submits.
 */
import { ApiError, UnrecognizedMediaError, type Download, type ServiceClient } from '../client';
import { utcDay } from '../shared/utc-day';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import { jobOutcome, resultsOwed } from './poller';

/** Fresh URLs asked for at most this often per item and UTC day (each one poll). */
export const FRESH_URL_POLLS_PER_DAY = 3;

/** Statuses a host gives a URL that expired, was revoked or is gone: the same URL will not work again. */
const DEAD_URL_STATUSES = new Set([401, 403, 404, 410]);

type Context = { db: StudioDB; client: ServiceClient; now: () => Date };

/**
 * Downloads result `n` of the item from the URL stored for it; a dead URL is replaced by a fresh
 * one from the job (and stored) before the single download again. The caller sorts what it throws.
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
    if (!looksDead(err) || !item.jobId) throw err;
    if (!takeFreshUrlPoll(ctx.db, item.id, ctx.now()))
      throw new Error(
        `${(err as Error).message}; fresh result URLs were already asked for ${FRESH_URL_POLLS_PER_DAY} times today, a retry tomorrow asks again (nothing is paid again)`,
        { cause: err },
      );
    const fresh = await freshUrls(ctx, item);
    const again = fresh[n];
    if (again === undefined) throw err;
    return ctx.client.download(again);
  }
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
  const job = await ctx.client.getGeneration(item.jobId ?? '');
  const old = storedUrls(ctx.db, item.id);
  const kind = jobOutcome(job).kind;
  // `partial`: the job lists fewer results than it completed, as when they were first stored.
  if ((kind !== 'delivered' && kind !== 'partial') || job.resultUrls.length < old.length)
    throw new Error(
      `the result URLs were refused and the job, asked again, lists ${job.resultUrls.length} result(s) where ${old.length} were stored (status ${String(job.status)})`,
    );
  // Results already stored are numbered by position: a pack that lists its shots in another order
  // would pair them with the wrong URLs.
  const shotMap = job.shots?.flatMap((s) => s.resultUrls.map(() => s.shotId)) ?? null;
  const stored = store.getItem(ctx.db, item.id)?.shotMap ?? null;
  if (shotMap && stored && JSON.stringify(shotMap) !== stored)
    throw new Error(
      'the result URLs were refused and the job, asked again, lists its shots in another order',
    );
  store.updateItem(ctx.db, item.id, { resultUrls: JSON.stringify(job.resultUrls) }, ctx.now());
  return job.resultUrls;
}

/**
 * Results the item's job owes beyond the URLs stored (its counters as last polled, `resultsOwed`):
 * more than 0 after a `partial` collection, so the photo is held, not exported, until the same
 * job is polled again and lists them (never resubmitted).
 */
export function resultsMissing(
  item: Pick<store.ItemRow, 'resultUrls' | 'packTotal' | 'packCompleted' | 'packFailed'>,
): number {
  const listed = (JSON.parse(item.resultUrls ?? '[]') as string[]).length;
  return Math.max(0, resultsOwed(item) - listed);
}

/** The runner's note on a photo collected `partial` (replaced once the rest is collected). */
export const PARTIAL_NOTE =
  /the service reported the job as \S+ with \d+ result\(s\) listed of \d+ completed after \d+ answers: collected the \d+ listed/;

/** The hold of a photo collected `partial`, on the photo and in `run`'s summary. */
export function partialHoldText(item: Pick<store.ItemRow, 'resultUrls'>, missing: number): string {
  const listed = (JSON.parse(item.resultUrls ?? '[]') as string[]).length;
  return `partial: ${listed} result(s) collected, ${missing} more paid for and not listed yet; the rest of the same job is collected later (retry or run again: it is polled again, never paid again)`;
}

export function storedUrls(db: StudioDB, itemId: string): string[] {
  return JSON.parse(store.getItem(db, itemId)?.resultUrls ?? '[]') as string[];
}
