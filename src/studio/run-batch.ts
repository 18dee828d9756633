/**
 * `dropshoot run`: one batch over every image under a folder, to the end, with results approved
 * automatically and exported. Sources stay where they are.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { ApiError } from '../client';
import type { Recipe } from '../shared/studio';
import {
  BALANCE_UNREAD_HOLD,
  Budget,
  planRefusalWords,
  REFUND_DUE_KEPT_MS,
  REFUND_NOT_SHOWN_HOLD,
  RESERVE_KEPT,
  UNCONFIRMED_PRICE_HOLD,
  WORST_RISE,
} from './budget';
import type { StudioEngine } from './engine';
import * as store from './db/store';
import { isDailyCapRefusal } from './gates';
import { lostBeforeResubmit, recipeHash, UNCERTAIN_RESUBMITS_MAX } from './queue';
import { ANOTHER_PHOTOS_JOB, KEY_HELD_NOTE, SHARED_UPLOAD_HELD } from './runner';
import { checkRecipe } from './recipe-check';
import { isPartialNote, isResultsHeld, RESULTS_HELD } from './result-download';
import { filesUnder } from './watch/files-under';
import { isSourcePhotoName, untakenImageReason } from './watch/sniff';
import { exportAgainIfMissing } from './export/destination';
import { watchTheDay } from './watch-the-day';
import { fileVerdict, type FileVerdict } from './export/compliance';
import { checkStableFile, type StableCheck } from './watch/stable-file';

/** A result refused for its size (client/download.ts): no later run fetches it either. */
const TOO_LARGE = /bytes any result may have/;

/** States of a photo not yet charged that a ceiling may hold. */
const ADMITTED_STATES = new Set(['queued', 'uploading', 'submitting']);

export type BatchSummary = {
  batchId: string;
  photos: number;
  exported: number;
  skipped: number;
  failed: { name: string; reason: string }[];
  uncertain: { name: string; reason: string }[];
  /** Photos not started because the batch reached its diamond ceiling (`--max-diamonds`). */
  held: { name: string; reason: string }[];
  /** Why each skipped photo was skipped (already exported to this folder, and when). */
  skippedPhotos: { name: string; reason: string }[];
  /**
   * Exported photos with fewer results than their job was paid for (the service listed only some):
   * the shots still owed, and whether the next runs ask for them. Absent when there are none.
   */
  partial?: { name: string; reason: string }[];
  /** Set when a signal stopped the run: the photos it left for the next run, with their state. */
  interrupted?: { signal: string; unfinished: { name: string; state: string }[] };
  /**
   * Diamonds the service charged for this run's submissions, less the refunds the run saw (a job
   * it saw `failed`, a 500 after the charge), plus what the closing balance read showed beyond
   * those charges. Charges on jobs it has not yet collected are included (`diamondsOnUncollectedJobs`):
   * the service refunds them if it fails those jobs, so what stays spent may end up lower.
   */
  diamondsSpent: number;
  /**
   * Of `diamondsSpent`, the charges on paid jobs whose outcome this run did not see (left at the
   * service when the daily cap closed the day, or when a signal stopped the run): refunded if the
   * service fails them; the run that collects them says so. Absent when there are none.
   */
  diamondsOnUncollectedJobs?: number;
  /**
   * Of `diamondsSpent`, what is counted at a list price the balance could not confirm (it could
   * not be read before or after the batch: no answer, or today's requests closed): the service
   * may have charged more. Absent when the balance confirmed the spend.
   */
  diamondsUnconfirmed?: number;
  apiRequests: number;
  files: string[];
  /** Each exported file's compliance verdict (pass / warn / fail) and the checks behind it. */
  compliance?: FileVerdict[];
  /** What `run` has to tell about money and requests: the plan, a short balance, a closed day. */
  notices?: string[];
  /** Diamonds still missing for the photos held by a short balance (402), when it ended the run. */
  diamondsMissing?: number;
  /** Paid jobs left at the service when the daily cap ended the run: collected by the next run. */
  collectTomorrow?: { name: string; jobId: string }[];
  /**
   * Paid jobs the service still reported `processing` when this run stopped waiting on them
   * (`--give-up-after`): kept in the studio as they are, collected by the next run at no charge.
   */
  stillProcessing?: { name: string; jobId: string; processingMinutes: number }[];
  /** Set when the service could not be reached at the start: why (nothing was started). */
  unreachable?: string;
};

/** `--uncertain`: what to do with a submission whose answer was lost; `--wait`: wait out 402 and the daily cap. */
export type RunOptions = {
  uncertain?: 'resubmit' | 'fail';
  wait?: boolean;
  onNotice?: (line: string) => void;
  /** How long a photo's size and time must stay unchanged before it is taken; default 1 s. */
  settleMs?: number;
  /**
   * Today's request count before the run's first request (`run` checks the recipe with the
   * service before the batch): apiRequests counts from there. Default: when the batch begins.
   */
  requestsBefore?: number;
  /** `--give-up-after`: how long this run waits on a job still processing; default 30 min. */
  giveUpAfterMs?: number;
  /** How often the wait for jobs still processing is told (`onNotice`); default 1 min. */
  progressEveryMs?: number;
};

/**
 * The spec says most jobs finish in 10 to 60 s (videos and catalog jobs take longer, their maximum
 * unstated): 30 minutes is far beyond any job that is merely slow, and short enough that a run
 * started by cron each hour ends (and frees the data folder's lock) before the next one starts.
 */
export const GIVE_UP_AFTER_MS = 30 * 60_000;
const PROGRESS_EVERY_MS = 60_000;

const spoken = (ms: number): string =>
  ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.floor(ms / 60_000)} min`;

/**
 * The progress line for photos whose create went out and got no answer to go on with (lost, or
 * still in flight at the service): they wait to be sent again under the same Idempotency-Key,
 * never a new one. A key the service showed it holds waits until its record must be stored
 * (review rev14 W1: this wait, 5 minutes, was told as "job(s) still processing" or not at all).
 */
function resendWaitLines(items: store.ItemRow[], now: number): string[] {
  const named = (list: store.ItemRow[], withError: boolean) =>
    list
      .slice(0, 5)
      .map((i) => {
        const left = Math.ceil((i.waitUntil ? Date.parse(i.waitUntil) - now : 0) / 1000);
        const when =
          left <= 0
            ? 'now'
            : `in ${left >= 60 ? `${Math.floor(left / 60)} min ${left % 60} s` : `${left} s`}`;
        return `${path.join(i.relativeDir, i.name)} ${when}${withError && i.error ? ` (${i.error})` : ''}`;
      })
      .join(', ') + (list.length > 5 ? ` and ${list.length - 5} more` : '');
  const held = items.filter((i) => i.error?.startsWith(KEY_HELD_NOTE));
  // No error and no wait: the create is still on its way, its answer not lost (review rev16 W2).
  const inFlight = items.filter((i) => !held.includes(i) && !i.error && !i.waitUntil);
  const other = items.filter((i) => !held.includes(i) && !inFlight.includes(i));
  const lines: string[] = [];
  if (inFlight.length) {
    const longest = Math.max(
      ...inFlight.map((i) => now - Date.parse(i.submittedAt ?? i.updatedAt)),
    );
    lines.push(
      `waiting for the service to answer ${inFlight.length} create(s) sent, the longest for ${spoken(longest)}`,
    );
  }
  if (held.length)
    lines.push(
      `waiting on ${held.length} photo(s) whose create's answer was lost after the service received it (it may have been charged): each is sent again under the same Idempotency-Key, which returns that charge's job instead of charging again, once the service must have stored it: ${named(held, false)}`,
    );
  if (other.length)
    lines.push(
      `waiting on ${other.length} photo(s) whose create got no answer to go on with (it may have been charged): each is asked again under the same Idempotency-Key, never a new one: ${named(other, true)}`,
    );
  return lines;
}

/**
 * While `run` waits for its batch: every `progressEveryMs` with jobs still processing at the
 * service, a line saying how many and for how long (from the key's first send, the charge), and
 * one for creates waiting to be sent again (`resendWaitLines`); and once nothing is left but jobs
 * this run has waited on for `giveUpAfterMs` (and photos a gate holds), `onGiveUp` with those
 * jobs' items. The studio's own state is not touched: the jobs stay paid and processing, for the
 * next run.
 */
function watchProcessing(
  engine: StudioEngine,
  batchId: string,
  opts: {
    giveUpAfterMs: number;
    progressEveryMs: number;
    heldBy: readonly string[];
    tell: (line: string) => void;
    onGiveUp: (items: store.ItemRow[]) => void;
  },
): () => void {
  let toldAt = engine.now().getTime();
  /**
   * Since when this run has waited on each job: a job taken over from an earlier run gets the full
   * bound again, and time spent waiting for a closed day (--wait) is not waiting on the job.
   */
  const waitingSince = new Map<string, number>();
  const tick = () => {
    const now = engine.now().getTime();
    const open = store
      .listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 })
      .items.filter((i) => !engine.isTerminal(i.state) && i.uncertain === 0);
    const processing = open.filter(
      (i) => i.state === 'processing' && i.jobId !== null && i.waitReason !== 'daily_cap',
    );
    const ids = new Set(processing.map((i) => i.id));
    for (const id of waitingSince.keys()) if (!ids.has(id)) waitingSince.delete(id);
    for (const i of processing) if (!waitingSince.has(i.id)) waitingSince.set(i.id, now);
    // Sent before, no job known: the answer was lost (or is in flight), to be asked again.
    const resending = open.filter(
      (i) => i.state === 'submitting' && i.submittedAt !== null && i.jobId === null,
    );
    // Paid results whose files are asked again (not readable yet, a connection cut): told too.
    const downloading = open.filter((i) => i.state === 'downloading' && i.waitUntil !== null);
    if (processing.length === 0 && resending.length === 0 && downloading.length === 0) return;
    const overdue = processing.filter((i) => now - waitingSince.get(i.id)! >= opts.giveUpAfterMs);
    const moving = open.filter(
      (i) => !overdue.includes(i) && !(i.waitReason && opts.heldBy.includes(i.waitReason)),
    );
    if (overdue.length > 0 && moving.length === 0) {
      stop();
      opts.onGiveUp(overdue);
      return;
    }
    if (now - toldAt < opts.progressEveryMs) return;
    toldAt = now;
    // A job resent under its key after a lost answer was made (and charged) at the key's first send.
    const since = (i: store.ItemRow) => Date.parse(i.keySentAt ?? i.submittedAt ?? i.updatedAt);
    if (processing.length > 0) {
      const longest = Math.max(...processing.map((i) => now - since(i)));
      opts.tell(
        `waiting for ${processing.length} job(s) still processing at the service, the longest for ${spoken(longest)}; this run stops waiting on a job after ${spoken(opts.giveUpAfterMs)} (--give-up-after), the next run collects it`,
      );
    }
    for (const line of resendWaitLines(resending, now)) opts.tell(line);
    if (downloading.length > 0)
      opts.tell(
        `downloading the results of ${downloading.length} paid job(s) again after a refusal or a cut connection (each asked again a few times, then held for the next run): ${downloading
          .slice(0, 5)
          .map((i) => `${path.join(i.relativeDir, i.name)} (${i.error ?? 'asked again'})`)
          .join(', ')}${downloading.length > 5 ? ` and ${downloading.length - 5} more` : ''}`,
      );
  };
  const timer = setInterval(tick, Math.min(1_000, opts.progressEveryMs));
  const stop = () => clearInterval(timer);
  return stop;
}

/**
 * A photo still being copied in (or cut short) would be uploaded and paid for as it is, and its
 * finished copy paid for again: `run` takes a file, like a hot folder, only once it has stopped
 * changing and decodes completely. One settle for all photos at once; one decode retry.
 */
const RUN_SETTLE_MS = 1_000;

type Intake = { file: string; check: StableCheck };

/** Every photo under the folder, in name order, checked complete (or why it is not). */
async function takeStablePhotos(
  inDir: string,
  options: { settleMs: number; signal: AbortSignal | undefined },
): Promise<Intake[]> {
  // An image in a format not taken (a GIF, a camera raw) is listed as not sent, not passed over:
  // the operator counts the photos they dropped.
  const found: { file: string; untaken: string | null }[] = [];
  for await (const file of filesUnder(inDir, { followSymlinks: true })) {
    const name = path.basename(file);
    if (isSourcePhotoName(name)) found.push({ file, untaken: null });
    else {
      const untaken = untakenImageReason(name);
      if (untaken) found.push({ file, untaken });
    }
  }
  const limit = pLimit(2); // each check reads and decodes a whole photo
  return Promise.all(
    found.map(async ({ file, untaken }) => ({
      file,
      check: untaken
        ? ({ kind: 'rejected', reason: untaken, size: 0, mtimeMs: 0 } as const)
        : await checkStableFile(file, {
            settleMs: options.settleMs,
            decodeRetries: 1,
            limit,
            ...(options.signal ? { signal: options.signal } : {}),
          }),
    })),
  );
}

/**
 * Photos under `root`, in name order. Symlinks are followed (a folder of links to photos is
 * shot like the photos), each real folder once, so a link back up cannot loop.
 */
async function* imagesUnder(root: string): AsyncGenerator<string> {
  for await (const file of filesUnder(root, { followSymlinks: true }))
    if (isSourcePhotoName(path.basename(file))) yield file;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Settings key marking a run whose summary was made (what it spent was reported). */
const RUN_REPORTED = 'run-reported:';

export async function runBatch(
  engine: StudioEngine,
  input: {
    inDir: string;
    recipe: Recipe;
    outDir: string;
    maxDiamonds?: number;
    signal?: AbortSignal;
  } & RunOptions,
): Promise<BatchSummary> {
  const requestsBefore = input.requestsBefore ?? engine.spending.requestsUsedToday();
  // What this run spent: charges made from now on (a photo taken over from an interrupted run was
  // charged by that run).
  const startedAt = engine.now().toISOString();
  const notices: string[] = [];
  const notice = (line: string) => {
    notices.push(line);
    input.onNotice?.(line);
  };
  const batchId = engine.createBatch({
    kind: 'run',
    outputDir: input.outDir,
    autoApprove: true,
    ceiling: input.maxDiamonds ?? null,
  });
  /** Each item's batch before this run took it over: whose run it was charged in (rev30 D3). */
  const batchBefore = new Map(
    (
      engine.db
        .prepare(
          "SELECT id, COALESCE(paid_batch_id, batch_id) AS batchId FROM items WHERE submitted_at IS NOT NULL AND state != 'exported'",
        )
        .all() as { id: string; batchId: string }[]
    ).map((r) => [r.id, r.batchId]),
  );
  let photos = 0;
  /** The first file taken for each item, and later files with the same bytes (one item, one job). */
  const firstFileOf = new Map<string, string>();
  const twins: { file: string; first: string; id: string }[] = [];
  /** Diamonds the balance shows this run spent that no photo's charge accounts for. */
  let unattributed = 0;
  /** Whether the balance was read before and after the batch (so the spend is what it says). */
  let confirmed = false;
  /** What the balance read before and after the batch shows spent (null: not both read). */
  let spentByBalance: number | null = null;
  let wantsBalance = false;
  let unreadAt: 'before' | 'after' = 'before';
  /** Items whose jobs this run stopped waiting on (`--give-up-after`). */
  const givenUp = new Set<string>();
  const { signal } = input;
  /** Photos not complete (still being copied, cut short, not an image): nothing sent or spent. */
  const unreadable: BatchSummary['failed'] = [];
  const intake = await takeStablePhotos(input.inDir, {
    settleMs: input.settleMs ?? RUN_SETTLE_MS,
    signal,
  }).catch((error: unknown) => {
    if (signal?.aborted) return [];
    throw error;
  });
  for (const { file, check } of intake) {
    if (signal?.aborted) break;
    if (check.kind === 'gone') continue; // deleted or moved away while we looked
    photos++;
    if (check.kind === 'rejected') {
      unreadable.push({
        name: path.relative(input.inDir, file),
        reason: `not sent, nothing spent: ${check.reason}`,
      });
      continue;
    }
    const queued = engine.enqueue({
      batchId,
      sourcePath: file,
      rootDir: input.inDir,
      sha256: check.file.sha256,
      recipe: input.recipe,
    });
    // The same bytes under another name: one item, paid once; its files go here too (rev30 D4).
    const first = firstFileOf.get(queued.id);
    if (first !== undefined) {
      twins.push({ file, first, id: queued.id });
      continue;
    }
    firstFileOf.set(queued.id, file);
    // Done before with this recipe: skipped only if its files are in --out; else exported again, for nothing.
    if (queued.state === 'skipped')
      exportAgainIfMissing(engine.db, queued.id, input.outDir, engine.now());
  }
  if (!signal?.aborted) {
    // Every photo priced and today's requests counted before anything is spent.
    const plan = await engine.prepareBatch(input.recipe, input.maxDiamonds ?? null);
    // The balance before any charge is what the spend is reconciled against (a remote service's
    // charge can differ from its list): a read whose answer was lost is asked again.
    wantsBalance = engine.client.origin !== 'embedded' || input.maxDiamonds !== undefined;
    if (plan.balance === null && wantsBalance && !engine.dayClosed())
      plan.balance = await askAgain(engine, signal, () => engine.spending.setAnchor());
    if (plan.balance === null && wantsBalance)
      notice(
        `the balance could not be read before the batch started${engine.spending.lastReadError ? ` (${engine.spending.lastReadError})` : ''}: diamondsSpent counts each charge at its list price and may be below what the service took`,
      );
    // Read before the batch: only the closing read can be missing (a signal may skip it).
    if (plan.balance !== null) unreadAt = 'after';
    // An earlier run counted these failed jobs as refunded; the refunds never came (rev14 R2).
    const neverCame = engine.spending.takeRefundsNeverCame();
    if (neverCame.length > 0)
      notice(
        `the refund of ${neverCame.length} failed job(s) of an earlier run (${neverCame.reduce((sum, r) => sum + r.diamonds, 0)} diamond(s)), awaited since ${new Date(Math.min(...neverCame.map((r) => r.since))).toISOString().slice(0, 16)} UTC, never reached the balance: those charges stand, spent beyond what that run reported (not counted in this run's diamondsSpent)`,
      );
    const queued = store.listItems(engine.db, {
      batchId,
      states: ['queued'],
      limit: 1_000_000,
      offset: 0,
    }).total;
    if (plan.perPhotoDiamonds !== null)
      notice(
        `${queued} photo(s) to start at ${engine.spending.quote(input.recipe)?.unknown ? "a price that is not known (the service's list gives none for this tool; under --max-diamonds one photo goes at a time until the balance shows it)" : `about ${plan.perPhotoDiamonds} diamond(s) each`}${plan.balance !== null ? `; balance ${plan.balance}` : ''}`,
      );
    // What fits is what admission will take: the scheduler's own count of today's requests for
    // new photos, after what paid jobs still running (resumed) and photos on their way need.
    const budget = engine.scheduler.requestsForNewPhotos();
    // The service's 429 already closed the day (a price or balance read): our count says nothing of it.
    if (engine.dayClosed() && engine.gates.cap?.kind === 'service')
      notice(
        `no requests left today (the service refused one: ${engine.gates.cap.message}): 0 of ${queued} photo(s) fit today`,
      );
    else if (budget !== null) {
      const fit = Math.max(0, Math.floor(budget.free / plan.perPhotoRequests));
      const today = engine.spending.requestsToday();
      const capText =
        today.serviceCapNamedOn !== null
          ? `${today.cap} (the service's daily cap, learned ${today.serviceCapNamedOn}; its last request ${RESERVE_KEPT})`
          : `${today.cap}`;
      const kept = [
        ...(budget.keptForPaid > 0
          ? [`${budget.keptForPaid} kept to collect ${budget.paidJobs} paid job(s) still running`]
          : []),
        ...(budget.kept > budget.keptForPaid
          ? [`${budget.kept - budget.keptForPaid} for photos already on their way`]
          : []),
      ];
      notice(
        `requests left today: ${budget.left} of ${capText} (about ${plan.perPhotoRequests} per photo${kept.length ? `; ${kept.join(', ')}` : ''}): ${Math.min(fit, queued)} of ${queued} photo(s) fit today`,
      );
    }
    engine.start({ onlyBatch: batchId });
    // Headless, nobody can lift a ceiling: photos it holds back end the run (a rerun continues them).
    // A short balance or a closed day ends it too, with the reason, unless --wait.
    const heldBy = input.wait
      ? (['ceiling'] as const)
      : (['ceiling', 'no_diamonds', 'daily_cap', 'jobs_hidden'] as const);
    const stopped = new Promise<void>((resolve) =>
      signal?.addEventListener('abort', () => resolve(), { once: true }),
    );
    // --wait: the day closing and reopening is told when it happens, not hours later.
    const stopWatching = input.wait ? watchTheDay(engine, batchId, notice) : () => {};
    // A job that stays processing for ever would keep the run going for ever, in silence: the
    // wait is told now and then, and given up on after a bound (the desktop studio keeps polling).
    const giveUp = new AbortController();
    const giveUpAfterMs = input.giveUpAfterMs ?? GIVE_UP_AFTER_MS;
    const stopGivingUp = watchProcessing(engine, batchId, {
      giveUpAfterMs,
      // Each minute, or sooner under a shorter bound: the wait is told before it is given up.
      progressEveryMs:
        input.progressEveryMs ?? Math.min(PROGRESS_EVERY_MS, Math.max(1_000, giveUpAfterMs / 3)),
      heldBy,
      tell: (line) => input.onNotice?.(line),
      onGiveUp: (overdue) => {
        for (const i of overdue) givenUp.add(i.id);
        notice(
          `stopped waiting on ${overdue.length} paid job(s) still processing at the service after ${spoken(giveUpAfterMs)} (--give-up-after): ${overdue.map((i) => `${path.join(i.relativeDir, i.name)} (job ${i.jobId})`).join(', ')}. Nothing is lost: the next run collects them at no new charge`,
        );
        giveUp.abort('give-up-after');
      },
    });
    const waitSignal = signal ? AbortSignal.any([signal, giveUp.signal]) : giveUp.signal;
    let shortReadAgain = false;
    /** Uncertain photos `--uncertain resubmit` leaves as they are (resubmitted once already, or no room under the ceiling). */
    const leftUncertain = new Set<string>();
    for (;;) {
      await Promise.race([engine.waitForBatch(batchId, undefined, heldBy, waitSignal), stopped]);
      if (signal?.aborted || giveUp.signal.aborted) break;
      // A 402 whose words name a balance below what the last reading showed (review rev15 X1:
      // 'required 4, balance 3' with 996 read): the balance is read once more before the photos
      // it held end the run; enough there lets them go (the gate opens, as on its own re-read).
      if (!input.wait && !shortReadAgain && (await readAgainWhenShort(engine, batchId))) {
        shortReadAgain = true;
        continue;
      }
      if (!input.uncertain) break;
      const open = store
        .listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 })
        .items.filter((i) => i.uncertain === 1 && !leftUncertain.has(i.id));
      const resubmits =
        input.uncertain === 'resubmit'
          ? resubmitsThatFit(engine, batchId, open, input.maxDiamonds ?? null)
          : null;
      let resolved = 0;
      for (const item of open) {
        const refusal = resubmits?.get(item.id);
        if (refusal) {
          // Left uncertain, saying why (once: a later run finds the words already there).
          leftUncertain.add(item.id);
          if (!item.note?.includes(refusal.marker))
            engine.transition(item.id, {
              note: `${item.note ?? 'uncertain submission'}; ${refusal.why}`,
            });
          notice(`${path.join(item.relativeDir, item.name)}: uncertain submission ${refusal.why}`);
          continue;
        }
        notice(
          `${path.join(item.relativeDir, item.name)}: uncertain submission ${input.uncertain === 'resubmit' ? `resubmitted (--uncertain resubmit; may cost ${item.price || plan.perPhotoDiamonds || 0} more diamonds if the first was charged; never resubmitted again)` : 'marked failed (--uncertain fail)'}`,
        );
        if (engine.resolveUncertain(item.id, input.uncertain)) resolved++;
      }
      if (resolved === 0) break;
    }
    stopWatching();
    stopGivingUp();
    // The run is over: the scheduler stops before the spend is settled and the summary read, so
    // no step (a probe of the closed day, say) changes an item under it.
    await engine.stop();
    if (!signal?.aborted) {
      const settling = engine.now().getTime();
      // At a closed day the read would be refused (by the service, or unsent by our own count),
      // unless work stopped one short of the service's cap as remembered: that request is this read.
      const reserved = engine.gates.cap?.kind === 'reserve' && engine.spending.reserveLeft();
      const after =
        engine.spending.anchored && (!engine.dayClosed() || reserved)
          ? await askAgain(engine, signal, async () => {
              await engine.settleSpend();
              return engine.spending.balanceReadSince(settling);
            })
          : null;
      // Photos held by the cap as remembered: one more request tells whether it still holds
      // (refused: the day is over) or was raised (answered: forgotten, the next run goes on).
      const cap = engine.spending.reserveCap();
      if (
        after !== null &&
        cap !== null &&
        engine.gates.cap?.kind === 'reserve' &&
        store
          .listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 })
          .items.some((i) => i.waitReason === 'daily_cap' && !engine.isTerminal(i.state)) &&
        (await engine.spending.probeCap()) === 'raised'
      )
        notice(
          `the service answered a request beyond its daily cap of ${cap} (as its 429 named it on an earlier day): the cap was raised, and is no longer planned with. Run again to go on`,
        );
      if (plan.balance !== null && after !== null) {
        confirmed = true;
        // Spent in the service's own apps meanwhile (Budget.spentOutside) is not this run's.
        const outside = engine.spending.spentOutside;
        if (outside > 0)
          notice(
            `${outside} diamond(s) left the balance outside this run (readings dropped by more than this run's charges could take, up to ${WORST_RISE} times their plan: spent in the service's own apps most likely, or a price rise no later reading repeated); not counted in diamondsSpent nor against --max-diamonds${engine.spending.outsideUnsettled > 0 ? `. diamondsSpent is estimated: the charges in those readings are counted at up to ${WORST_RISE} times their plan, ${engine.spending.outsideUnsettled} diamond(s) above it, which no later reading settled` : ''}`,
          );
        // Failed jobs' refunds the balances miss (late, or landed from an earlier run's) are no spend.
        spentByBalance = plan.balance - after - outside + engine.spending.refundsNotInBalances;
        unattributed = chargedUncertain(engine, batchId, startedAt, spentByBalance);
        if (unattributed > 0)
          notice(
            `the balance shows ${unattributed} diamond(s) spent beyond the charges known per photo (a price not yet confirmed, or a lost answer's charge): counted in diamondsSpent`,
          );
        // A refund late and one that never comes look the same today (rev14 R2): said, not counted.
        const awaited = engine.spending.refundsAwaited;
        if (awaited.count > 0)
          notice(
            `the balance does not show the refund of ${awaited.count} failed job(s) yet (${awaited.diamonds} diamond(s)): not counted in diamondsSpent, as the service refunds a failed job automatically (spec 3.1, no timing given); if it never comes, those diamonds were spent too, which a run ${REFUND_DUE_KEPT_MS / 60_000} min or more from now says`,
          );
      }
    }
  }
  // However it ended (the batch, a signal, nothing to run), running steps reach a safe point and
  // nothing more starts before the summary is read.
  await engine.stop();
  const { items } = store.listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 });
  const thisRun = items.filter((i) => i.submittedAt !== null && i.submittedAt >= startedAt);
  const chargedThisRun = thisRun.reduce((sum, i) => sum + i.diamonds, 0);
  /** Diamonds counted as this run's charges that the balance does not show spent (it moved up meanwhile). */
  const notShownByBalance =
    spentByBalance === null ? 0 : Math.max(0, chargedThisRun - spentByBalance);
  // The balance is shared with the service's own apps: a credit during the batch (a refund, a
  // top-up) hides what the charges cost; they stay counted at their plan or reading (never less),
  // unconfirmed, and the figure is said to be estimated.
  const diamondsUnconfirmed =
    wantsBalance && (!confirmed || notShownByBalance > 0)
      ? thisRun.filter((i) => i.priceSure === 0).reduce((sum, i) => sum + i.diamonds, 0)
      : 0;
  if (diamondsUnconfirmed > 0 && confirmed)
    notice(
      `the balance shows ${notShownByBalance} diamond(s) fewer spent than this run's charges as counted: it is shared with the service's own apps, and something credited it meanwhile (a refund, a top-up), so it cannot tell what each charge cost. diamondsSpent is estimated: ${diamondsUnconfirmed} of the ${chargedThisRun + unattributed} diamond(s) are counted at the price planned or read (rounded up, never below the list; with its margin where the credit hid the charges whole), which the service may exceed`,
    );
  else if (diamondsUnconfirmed > 0)
    notice(
      `the balance could not be read ${unreadAt} the batch (${signal?.aborted ? `the run was stopped by ${String(signal.reason)} before its closing read` : engine.dayClosed() ? "today's requests are closed" : (engine.spending.lastReadError ?? 'no answer')}); ${diamondsUnconfirmed} of the ${chargedThisRun + unattributed} diamond(s) counted as spent are at list prices the service may exceed`,
    );
  const reason = (i: store.ItemRow) => i.error ?? i.note ?? i.waitReason ?? 'unknown';
  const name = (i: store.ItemRow) => path.join(i.relativeDir, i.name);
  // Admission's own words already begin so ("not started: today's request budget…").
  const notStarted = (i: store.ItemRow) =>
    i.error?.startsWith('not started: ')
      ? i.error
      : `not started: ${i.error ?? 'the daily request cap is reached'}`;
  const unfinished = (i: store.ItemRow) =>
    !engine.isTerminal(i.state) && i.state !== 'review' && i.uncertain === 0;
  // Short of diamonds: the service's words, and how many diamonds the held photos still need.
  const short = items.filter((i) => unfinished(i) && i.waitReason === 'no_diamonds' && !i.jobId);
  const gate = engine.gates.diamonds;
  let diamondsMissing: number | undefined;
  // Refused 402 while the balance covers a photo and the plan is not active (spec 2.9): the plan,
  // not the diamonds, is what stops them. 'Add diamonds' was the wrong advice (rev27 O1).
  const perPhoto = gate
    ? Math.max(gate.needed, ...short.map((i) => i.price || i.reserved || 0))
    : 0;
  const planHeld = gate ? engine.spending.planRefusing(perPhoto) : null;
  if (short.length && gate) {
    const plan = planHeld;
    if (plan)
      notice(
        `refused 402: ${gate.message} (${short.length} photo(s) held), while the balance (${engine.spending.lastAccountRead!.balance}) covers their price: the account's plan is ${plan}, and adding diamonds will not help. Settle the plan with the service, then run again`,
      );
    else {
      diamondsMissing = Math.max(0, perPhoto * short.length - (gate.balance ?? 0));
      notice(
        `short of diamonds: ${gate.message} (${short.length} photo(s) held; about ${diamondsMissing} diamond(s) missing). Add diamonds and run again, or use --wait`,
      );
    }
  }
  // The service refusing to show paid jobs (hidden-jobs.ts): new photos were not sent.
  const hidden = items.filter((i) => unfinished(i) && i.waitReason === 'jobs_hidden');
  if (hidden.length)
    notice(
      `${hidden.length} photo(s) not started: the service refused to show paid jobs (${engine.gates.hiddenJobs.state?.message ?? 'refused'}), so new ones could not be collected either; nothing was sent for them. Settle the account with the service (a plan paused or unpaid refuses so), then run again`,
    );
  // The daily cap: paid jobs stay at the service and are collected by the next run.
  // A paid job left without a wait reason (its last poll was the day's refused probe) waits for the
  // day as much as the others do.
  const dayClosed = engine.dayClosed();
  const capped = items.filter(
    (i) =>
      unfinished(i) &&
      (i.waitReason === 'daily_cap' || (dayClosed && i.waitReason === null && i.jobId !== null)),
  );
  const collectTomorrow = capped
    .filter((i) => i.jobId !== null && store.isPaid(i))
    .map((i) => ({ name: name(i), jobId: i.jobId! }));
  // Its create went out and the answer was lost: the service may hold the charge (rev30 D2).
  const sentCapped = capped.filter(
    (i) => i.jobId === null && (i.keySentAt !== null || i.submittedAt !== null),
  );
  const maybeDiamonds = sentCapped.reduce((sum, i) => sum + (i.price || i.reserved || 0), 0);
  if (capped.length) {
    const reopens = engine.gates.cap
      ? new Date(engine.gates.cap.until).toISOString()
      : 'the next UTC day (00:00 UTC)';
    // No gate closed: admission held what no longer fits the cap in use, the service's as
    // remembered when that is the one that binds.
    const reserve = engine.spending.reserveCap();
    const why =
      engine.gates.cap?.message ??
      (reserve !== null
        ? engine.spending.reserveHoldText()
        : `--daily-cap ${engine.spending.dailyCap}`);
    notice(
      `daily request cap reached (${why}); it reopens at ${reopens}. ` +
        `${collectTomorrow.length} paid job(s) will be collected by the next run: ${collectTomorrow.map((c) => c.name).join(', ') || 'none'}; ` +
        (sentCapped.length
          ? `${sentCapped.length} photo(s) paid or maybe paid (a create sent, its answer lost; about ${maybeDiamonds} diamond(s) the service may have charged), sent again under the same key by the next run: ${sentCapped.map(name).join(', ')}; `
          : '') +
        `${capped.length - collectTomorrow.length - sentCapped.length} photo(s) not started. Use --wait to wait instead`,
    );
  }
  // Jobs this run stopped waiting on, still processing: paid, kept, collected by the next run.
  const stillProcessing = items
    .filter((i) => givenUp.has(i.id) && unfinished(i) && i.jobId !== null && !capped.includes(i))
    .map((i) => ({
      name: name(i),
      jobId: i.jobId!,
      processingMinutes: Math.floor(
        (engine.now().getTime() - Date.parse(i.submittedAt ?? i.updatedAt)) / 60_000,
      ),
    }));
  // Any other paid job left unfinished (the run ended on another photo's refusal while this one
  // waited to be asked again): still the service's to deliver, never left out of every list.
  const paidToCollect = signal?.aborted
    ? []
    : items.filter(
        (i) =>
          unfinished(i) &&
          i.jobId !== null &&
          store.isPaid(i) &&
          !capped.includes(i) &&
          !stillProcessing.some((s) => s.jobId === i.jobId && s.name === name(i)),
      );
  // Charges on jobs whose outcome this run did not see: the service refunds them if it fails them.
  const diamondsSpent = chargedThisRun + unattributed;
  const diamondsOnUncollectedJobs = thisRun
    .filter(
      (i) =>
        i.jobId !== null &&
        i.jobStatus !== 'completed' &&
        i.jobStatus !== 'failed' &&
        i.jobStatus !== ANOTHER_PHOTOS_JOB,
    )
    .reduce((sum, i) => sum + i.diamonds, 0);
  if (diamondsOnUncollectedJobs > 0)
    notice(
      `${diamondsSpent} diamond(s) spent, ${diamondsOnUncollectedJobs} of them on jobs to collect ${dayClosed ? 'tomorrow' : 'by the next run'}, refunded if the service fails them`,
    );
  // Paid, results not downloaded in this run (refused, or still failing after the tries): held,
  // never listed as failed; the next run downloads them from the same jobs (review rev15 F3, T1).
  const resultsHeld = items.filter(
    (i) =>
      i.state === 'failed' && (isResultsHeld(i.error) || i.error?.startsWith(SHARED_UPLOAD_HELD)),
  );
  // The service handed one upload URL to photos with other bytes (review rev25 D3): never sent on
  // a URL another photo holds; a photo whose create went out first may have been read with the
  // other photo's image, so its results are held, not exported under its name.
  const uploadedAgain = items.filter((i) => /-shared-\d+$/.test(i.uploadKey ?? ''));
  const sharedHeld = items.filter((i) => i.error?.startsWith(SHARED_UPLOAD_HELD));
  if (uploadedAgain.length || sharedHeld.length)
    notice(
      `the service handed the same upload URL to photos with different bytes (a later upload may replace an earlier one under it): ${uploadedAgain.length} photo(s) uploaded again before being sent${sharedHeld.length ? `; ${sharedHeld.length} paid photo(s) whose job may have read another photo's image: results held, not exported (check them; Generate again pays anew): ${sharedHeld.map((i) => `${name(i)} (job ${i.jobId})`).join(', ')}` : ''}`,
    );
  const notDownloaded = resultsHeld.filter((i) => isResultsHeld(i.error));
  const tooLarge = notDownloaded.filter((i) => TOO_LARGE.test(i.error!));
  const later = notDownloaded.filter((i) => !tooLarge.includes(i));
  if (later.length)
    notice(
      `${later.length} paid photo(s) whose results could not be downloaded in this run: held, not failed; the next run downloads them from the same job(s) at no new charge: ${later.map((i) => `${name(i)} (job ${i.jobId})`).join(', ')}`,
    );
  if (tooLarge.length)
    notice(
      `${tooLarge.length} paid photo(s) whose results are larger than any result Dropshoot fetches: held, not failed; ask the service for smaller ones: ${tooLarge.map((i) => `${name(i)} (job ${i.jobId})`).join(', ')}`,
    );
  // Outputs the service reported failed (its packFailed): paid, never delivered, not refunded per
  // shot (spec 3.2); exported photos said nothing of them (rev23 N1, N6).
  const failedOutputs = (i: store.ItemRow) =>
    i.packFailed ?? Number(/(\d+) shot\(s\) failed/.exec(i.note ?? '')?.[1] ?? 0);
  const shortOfOutputs = items.filter((i) => i.state === 'exported' && failedOutputs(i) > 0);
  if (shortOfOutputs.length)
    notice(
      `${shortOfOutputs.length} photo(s) exported without every output paid for: the service reported outputs failed, which it does not refund per shot (spec 3.2): ${shortOfOutputs.map((i) => `${name(i)} (${failedOutputs(i)} output(s) failed, job ${i.jobId})`).join(', ')}`,
    );
  const partial = items
    .filter((i) => i.state === 'exported' && isPartialNote(i.note))
    .map((i) => ({ name: name(i), reason: i.note! }));
  // Charged by an earlier run that ended without its summary (kill -9), collected here: no run
  // reported them (runner.ts keeps them out of this run's spend).
  const interruptedCharges = items.filter((i) => {
    const payer = batchBefore.get(i.id);
    return (
      i.state === 'exported' &&
      i.diamonds > 0 &&
      i.submittedAt !== null &&
      i.submittedAt < startedAt &&
      payer !== undefined &&
      payer !== batchId &&
      store.getSetting(engine.db, `${RUN_REPORTED}${payer}`) === undefined
    );
  });
  if (interruptedCharges.length)
    notice(
      `${interruptedCharges.reduce((sum, i) => sum + i.diamonds, 0)} diamond(s) were spent by an earlier run that was interrupted, on photos this run collected (${interruptedCharges.length} photo(s)); not counted in this run's diamondsSpent`,
    );
  store.setSetting(engine.db, `${RUN_REPORTED}${batchId}`, engine.now().toISOString());
  const twinsDone = copyToTwins(engine, twins, input.inDir, input.outDir);
  return {
    batchId,
    photos,
    exported:
      items.filter((i) => i.state === 'exported').length +
      twinsDone.filter((t) => t.exported).length,
    skipped:
      items.filter((i) => i.state === 'skipped').length + twinsDone.filter((t) => t.skipped).length,
    failed: [
      ...unreadable,
      ...items
        .filter(
          (i) => (i.state === 'failed' || i.state === 'cancelled') && !resultsHeld.includes(i),
        )
        .map((i) => ({ name: path.join(i.relativeDir, i.name), reason: reason(i) })),
    ],
    // Why it is uncertain (the note) matters more than the network error that led there.
    uncertain: items
      .filter((i) => i.uncertain === 1)
      .map((i) => ({ name: path.join(i.relativeDir, i.name), reason: i.note ?? reason(i) })),
    held: [
      ...twinsDone.filter((t) => t.held).map((t) => ({ name: t.name, reason: t.reason })),
      ...items
        // A photo admitted again after an uncharged create (scheduler.ts) waits where it stopped.
        .filter(
          (i) => ADMITTED_STATES.has(i.state) && i.jobId === null && i.waitReason === 'ceiling',
        )
        .map((i) => ({
          name: name(i),
          reason:
            i.error?.startsWith(UNCONFIRMED_PRICE_HOLD) ||
            i.error?.startsWith(BALANCE_UNREAD_HOLD) ||
            i.error?.startsWith(REFUND_NOT_SHOWN_HOLD)
              ? i.error
              : `not started: the batch reached its ceiling of ${input.maxDiamonds} diamonds`,
        })),
      ...short.map((i) => ({
        name: name(i),
        reason: planHeld
          ? `not started: ${planRefusalWords(gate?.message ?? 'insufficient diamonds', planHeld)}`
          : `not started: short of diamonds: ${gate?.message ?? i.error ?? 'insufficient diamonds'}`,
      })),
      ...hidden.map((i) => ({ name: name(i), reason: notStarted(i) })),
      ...capped.map((i) => ({
        name: name(i),
        reason: i.jobId
          ? `paid (job ${i.jobId}); to be collected after the daily cap reopens`
          : sentCapped.includes(i)
            ? `${sentWords(i)}; sent again under the same key after the daily cap reopens`
            : notStarted(i),
      })),
      ...resultsHeld.map((i) => ({
        name: name(i),
        reason: i.error!.startsWith(SHARED_UPLOAD_HELD)
          ? `paid (job ${i.jobId}); results not exported: ${i.error!.slice(SHARED_UPLOAD_HELD.length)}`
          : `paid (job ${i.jobId}); ${i.error!.slice(RESULTS_HELD.length)}; ${
              TOO_LARGE.test(i.error!)
                ? 'no run fetches a result that large: ask the service for a smaller one (a shorter video, a lower resolution)'
                : 'the next run collects it at no new charge'
            }`,
      })),
      ...paidToCollect.map((i) => ({
        name: name(i),
        reason: `paid (job ${i.jobId}); still to collect when this run ended (${i.error ?? i.waitReason ?? i.state}); the next run collects it at no new charge`,
      })),
      ...stillProcessing.map((s) => ({
        name: s.name,
        reason: `paid (job ${s.jobId}); still processing at the service when this run stopped waiting (--give-up-after ${spoken(input.giveUpAfterMs ?? GIVE_UP_AFTER_MS)}); the next run collects it at no new charge`,
      })),
    ],
    skippedPhotos: [
      ...items
        .filter((i) => i.state === 'skipped')
        .map((i) => ({ name: path.join(i.relativeDir, i.name), reason: i.note ?? 'skipped' })),
      ...twinsDone.filter((t) => t.skipped).map((t) => ({ name: t.name, reason: t.reason })),
    ],
    ...(partial.length > 0 ? { partial } : {}),
    ...(signal?.aborted
      ? {
          interrupted: {
            signal: String(signal.reason),
            unfinished: items
              .filter((i) => !engine.isTerminal(i.state) && i.state !== 'review')
              .map((i) => ({ name: path.join(i.relativeDir, i.name), state: i.state })),
          },
        }
      : {}),
    diamondsSpent,
    ...(diamondsOnUncollectedJobs > 0 ? { diamondsOnUncollectedJobs } : {}),
    ...(diamondsUnconfirmed > 0 ? { diamondsUnconfirmed } : {}),
    apiRequests: engine.spending.requestsUsedToday() - requestsBefore,
    files: [
      ...items.flatMap((i) =>
        store
          .resultsOf(engine.db, i.id)
          .map((r) => r.exportedPath)
          .filter((p): p is string => p !== null),
      ),
      ...twinsDone.flatMap((t) => t.files),
    ],
    compliance: items.flatMap((i) =>
      store
        .resultsOf(engine.db, i.id)
        .flatMap((r) =>
          r.exportedPath === null ? [] : [fileVerdict(r.exportedPath, r.compliance)],
        ),
    ),
    notices,
    ...(diamondsMissing !== undefined ? { diamondsMissing } : {}),
    ...(capped.length ? { collectTomorrow } : {}),
    ...(stillProcessing.length ? { stillProcessing } : {}),
  };
}

/** Why `--uncertain resubmit` leaves an uncertain photo as it is, and the words that mark its note so. */
type ResubmitRefusal = { why: string; marker: string };

const RESUBMITTED_ONCE = 'never resubmitted again';
const NO_ROOM = 'has no room for a second charge';

/**
 * Which uncertain photos `--uncertain resubmit` must leave uncertain (the others are sent again
 * under a new key): one resubmitted once already (`UNCERTAIN_RESUBMITS_MAX`: it may have cost
 * twice), and under a ceiling, one whose second charge does not fit. Against the ceiling counts
 * what the batch was charged, and every lost create at its plan as possibly charged (the photo's
 * own first one too), and each resubmit let go at its plan and margin, as admission reserves it.
 * Review rev17 U1: each settle resubmitted every uncertain photo, past `--max-diamonds`.
 */
function resubmitsThatFit(
  engine: StudioEngine,
  batchId: string,
  uncertain: store.ItemRow[],
  ceiling: number | null,
): Map<string, ResubmitRefusal> {
  const refusals = new Map<string, ResubmitRefusal>();
  const planOf = (i: store.ItemRow) => i.price || engine.quoteOf(i)?.diamonds || 0;
  const again = uncertain.filter((i) => {
    if (i.uncertainResubmits < UNCERTAIN_RESUBMITS_MAX) return true;
    refusals.set(i.id, {
      why: `left uncertain: resubmitted once already and that answer was lost too (it may have cost ${planOf(i)} diamond(s) twice); ${RESUBMITTED_ONCE}, by this run or a later one: check the service's jobs and ledger before anything else`,
      marker: RESUBMITTED_ONCE,
    });
    return false;
  });
  if (ceiling === null) return refusals;
  const { charged } = engine.db
    .prepare(
      `SELECT COALESCE(SUM(diamonds), 0) AS charged FROM items WHERE batch_id = ?
         AND (submitted_at IS NULL OR submitted_at >= (SELECT created_at FROM batches WHERE id = ?))`,
    )
    .get(batchId, batchId) as { charged: number };
  let possibly =
    charged +
    lostBeforeResubmit(engine.db, batchId, planOf) +
    uncertain.filter((i) => i.diamonds === 0).reduce((sum, i) => sum + planOf(i), 0);
  for (const item of again) {
    const quote = engine.quoteOf(item);
    const second = planOf(item) + (quote ? Budget.margin(quote) : 0);
    if (possibly + second <= ceiling) {
      possibly += second;
      continue;
    }
    refusals.set(item.id, {
      why: `not resubmitted: the batch's ceiling of ${ceiling} diamonds ${NO_ROOM} (${second} with its margin; ${possibly} already charged, possibly charged by a lost create (each at its plan) or reserved for a resubmit); left uncertain`,
      marker: NO_ROOM,
    });
  }
  return refusals;
}

/**
 * A balance read asked again, briefly (about 7 s), when its answer is lost, reset or refused for
 * a while: without it the run's spend cannot be told from the balance. Not while today's requests
 * are closed (a read would be refused unsent, or use up the day's last requests).
 */
async function askAgain(
  engine: StudioEngine,
  signal: AbortSignal | undefined,
  read: () => Promise<number | null>,
  delaysMs: readonly number[] = [500, 1000, 2000, 4000],
): Promise<number | null> {
  for (let attempt = 0; ; attempt++) {
    const value = await read();
    if (value !== null || attempt >= delaysMs.length || signal?.aborted || engine.dayClosed())
      return value;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delaysMs[attempt]);
      signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

/**
 * A submission whose answer was lost may have been charged; only the balance can tell. What the
 * balance says this run spent beyond the charges it knows of is counted as the uncertain
 * submissions' (each at its price, as far as the difference goes), so the summary's spend is what
 * the service took, and the operator reads that resubmitting pays again. Refunds of earlier runs'
 * jobs can only shrink the difference: nothing is ever counted that the balance does not show.
 */
function chargedUncertain(
  engine: StudioEngine,
  batchId: string,
  startedAt: string,
  spentByBalance: number,
): number {
  const { items } = store.listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 });
  const thisRun = items.filter((i) => i.submittedAt !== null && i.submittedAt >= startedAt);
  let unexplained = spentByBalance - thisRun.reduce((sum, i) => sum + i.diamonds, 0);
  if (unexplained <= 0) return 0;
  // A known charge at an unconfirmed price may be the difference: no photo can be named, the total is still told.
  if (thisRun.some((i) => i.uncertain === 0 && i.diamonds > 0 && i.priceSure === 0))
    return unexplained;
  for (const item of thisRun.filter((i) => i.uncertain === 1 && i.diamonds === 0)) {
    const price = item.price || engine.quoteOf(item)?.diamonds || 0;
    if (price <= 0 || unexplained < price) continue;
    unexplained -= price;
    engine.transition(item.id, {
      diamonds: price,
      price,
      priceSure: 1,
      note: `${item.note ?? 'uncertain submission'}; the balance read after the run shows ${price} diamond(s) spent beyond the known charges: counted as this submission's charge (resubmitting pays again)`,
    });
  }
  return unexplained;
}

/**
 * Photos of the batch held short of diamonds by a 402 whose named balance is below what the last
 * reading showed (`balanceReadSince`): the balance is read once; when it covers what the 402
 * asked for, the gate opens and they go. Returns whether they were let go.
 */
async function readAgainWhenShort(engine: StudioEngine, batchId: string): Promise<boolean> {
  const gate = engine.gates.diamonds;
  const lastRead = engine.spending.balanceReadSince(0);
  if (!gate || lastRead === null || lastRead < gate.needed) return false;
  if (gate.balance !== null && gate.balance >= gate.needed) return false;
  const held = store
    .listItems(engine.db, { batchId, limit: 1_000_000, offset: 0 })
    .items.some((i) => i.waitReason === 'no_diamonds' && !i.jobId && !engine.isTerminal(i.state));
  if (!held || engine.dayClosed()) return false;
  const sentAt = engine.now().getTime();
  const account = await engine.client.getAccount().catch(() => null);
  if (account === null || !engine.db.open) return false;
  const balance = account.diamondBalance;
  engine.spending.balanceSeen(balance, sentAt);
  engine.spending.accountRead(account);
  // The plan, not the diamonds, refused: only a top-up is worth another create.
  const planHolds = engine.spending.planRefusing(gate.needed) !== null;
  if (!engine.gates.balanceRead(gate, balance, planHolds)) return false;
  engine.clearWaits('no_diamonds');
  engine.kick();
  return true;
}

/** What the recipe check at the start of `run` found. */
export type StartCheck =
  { kind: 'ok' } | { kind: 'invalid'; problem: string } | { kind: 'unreachable'; reason: string };

/**
 * The recipe check at the start of `run`, asked again briefly (bounded: about 7 s, a
 * `Retry-After` honoured up to 10 s) when the service does not answer, resets, or answers 429 or
 * 5xx. A daily cap is not waited for here. The recipe's own problems are not retried.
 */
export async function checkBeforeRun(
  engine: StudioEngine,
  recipe: Recipe,
  opts: { signal?: AbortSignal; delaysMs?: readonly number[] } = {},
): Promise<StartCheck> {
  const delays = opts.delaysMs ?? [1000, 2000, 4000];
  for (let attempt = 0; ; attempt++) {
    try {
      const problem = await checkRecipe(engine.client, recipe, { transientThrows: true });
      return problem ? { kind: 'invalid', problem } : { kind: 'ok' };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const capped = isDailyCapRefusal(err, {
        used: engine.spending.requestsUsedToday(),
        cap: engine.spending.workingCap(),
      });
      // The service's cap, named: remembered for the days after (budget.ts).
      if (capped && !err.notSent) engine.spending.learnCap(err.message);
      if (capped || attempt >= delays.length || opts.signal?.aborted) {
        const reason =
          err.status === 0 ? err.message : `the service answered ${err.status}: ${err.message}`;
        return {
          kind: 'unreachable',
          reason: capped ? err.message : `${reason} (asked ${attempt + 1} times)`,
        };
      }
      const wait = Math.min(10_000, Math.max(delays[attempt]!, err.retryAfterMs ?? 0));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        opts.signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), {
          once: true,
        });
      });
    }
  }
}

/**
 * `run`'s summary when the service could not be reached to check the recipe: nothing is queued or
 * spent; each photo is told as already delivered to --out (skipped) or not started, with a paid
 * job of an earlier run named (the next run collects it, never pays again).
 */
export async function unreachableSummary(
  engine: StudioEngine,
  input: {
    inDir: string;
    recipe: Recipe;
    outDir: string;
    reason: string;
    apiRequests: number;
    onNotice?: (line: string) => void;
  },
): Promise<BatchSummary> {
  const hash = recipeHash(input.recipe);
  const held: BatchSummary['held'] = [];
  const uncertain: BatchSummary['uncertain'] = [];
  const skippedPhotos: BatchSummary['skippedPhotos'] = [];
  let photos = 0;
  for await (const file of imagesUnder(input.inDir)) {
    photos++;
    const name = path.relative(input.inDir, file);
    const sha = await sha256Of(file);
    const twin = store.findEquivalent(engine.db, sha, hash);
    // A create sent whose answer was lost: paid or maybe paid, never 'not started' (rev30 D2).
    const sent = twin && store.isPaid(twin) ? undefined : sentUnanswered(engine, sha, hash);
    if (sent) {
      const entry = {
        name,
        reason: `${sentWords(sent)}; not collected: the service could not be reached (${input.reason})`,
      };
      (sent.uncertain === 1 ? uncertain : held).push(entry);
      continue;
    }
    const files =
      twin?.state === 'exported'
        ? store.resultsOf(engine.db, twin.id).map((r) => r.exportedPath)
        : [];
    const here =
      files.length > 0 &&
      files.every(
        (f) => f !== null && !path.relative(input.outDir, f).startsWith('..') && fs.existsSync(f),
      );
    if (here)
      skippedPhotos.push({ name, reason: `already exported to ${input.outDir}; nothing spent` });
    else if (twin && store.isPaid(twin) && twin.state !== 'exported')
      held.push({
        name,
        reason: `paid in an earlier run (job ${twin.jobId}); not collected: the service could not be reached (${input.reason}); the next run collects it`,
      });
    else
      held.push({
        name,
        reason: `not started: the service could not be reached (${input.reason})`,
      });
  }
  const owed = uncertain.length + held.filter((h) => h.reason.startsWith('paid')).length;
  const line = `the service could not be reached to check the recipe: ${input.reason}; ${
    owed > 0
      ? `nothing new was started; ${owed} photo(s) paid or maybe paid in an earlier run are listed (held, uncertain)`
      : 'nothing was started or spent'
  }. Run again when it answers`;
  input.onNotice?.(line);
  return {
    batchId: '',
    photos,
    exported: 0,
    skipped: skippedPhotos.length,
    failed: [],
    uncertain,
    held,
    skippedPhotos,
    diamondsSpent: 0,
    apiRequests: input.apiRequests,
    files: [],
    notices: [line],
    unreachable: input.reason,
  };
}

/** The photo's item whose create went out unanswered (key sent, or uncertain), not exported. */
function sentUnanswered(engine: StudioEngine, sha: string, hash: string) {
  return engine.db
    .prepare(
      `SELECT job_id AS jobId, uncertain, note, error FROM items WHERE sha256 = ? AND recipe_hash = ?
       AND state != 'exported' AND job_id IS NULL AND (uncertain = 1 OR key_sent_at IS NOT NULL OR submitted_at IS NOT NULL)
       ORDER BY created_at DESC LIMIT 1`,
    )
    .get(sha, hash) as Pick<store.ItemRow, 'uncertain' | 'note' | 'error'> | undefined;
}

/** A create sent, its answer lost: the service may hold its charge. */
const sentWords = (i: Pick<store.ItemRow, 'uncertain' | 'note' | 'error'>) =>
  `paid or maybe paid: its create was sent and its answer lost${i.uncertain === 1 && i.note ? ` (${i.note})` : ''}`;

/**
 * A file with the same bytes as another of the run (one item, paid once): the item's exported
 * files are copied under the twin's own subfolder, so every SKU folder gets its image.
 */
function copyToTwins(
  engine: StudioEngine,
  twins: { file: string; first: string; id: string }[],
  inDir: string,
  outDir: string,
) {
  return twins.map((t) => {
    const name = path.relative(inDir, t.file);
    const firstName = path.relative(inDir, t.first);
    const item = store.getItem(engine.db, t.id);
    const done = item?.state === 'exported' || item?.state === 'skipped';
    const made = done
      ? store
          .resultsOf(engine.db, t.id)
          .map((r) => r.exportedPath)
          .filter((p): p is string => p !== null && fs.existsSync(p))
      : [];
    if (!done || made.length === 0)
      return {
        name,
        files: [],
        exported: false,
        skipped: false,
        held: true,
        reason: `the same photo (same bytes) as ${firstName}, done as one: not exported here, as ${firstName} was not (${item?.error ?? item?.state ?? 'unknown'}); the run that exports it puts its files here too`,
      };
    const dir = path.join(outDir, path.dirname(name));
    fs.mkdirSync(dir, { recursive: true });
    const files = made.map((from) => {
      const to = path.join(dir, path.basename(from));
      if (!fs.existsSync(to)) fs.copyFileSync(from, to);
      return to;
    });
    return {
      name,
      files,
      exported: item?.state === 'exported',
      skipped: item?.state === 'skipped',
      held: false,
      reason: `the same photo (same bytes) as ${firstName}: paid once, its files copied to ${dir}`,
    };
  });
}
