/**
 * One step of one photo: upload -> submit -> (poll, when due) -> download -> export. Every step
 * writes its journal entry before the network call it guards, so a crash at any point resumes
 * without losing the photo or paying twice. Errors are sorted here: what was paid for is never
 * given up (it waits and is collected again), and only the service's own answer decides whether a
 * submission can be sent again.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, isUnnamedJob } from '../client';
import type { ServiceClient } from '../client';
import {
  fillPhoto,
  isReadyShootRecipe,
  jobGroup,
  RecipeSchema,
  requestToolId,
  type ItemState,
  type Recipe,
} from '../shared/studio';
import { SHOT_PRICE } from './budget';
import * as store from './db/store';
import { exportApproved } from './export-step';
import { withUploadNote } from './prepare';
import { fileAddressOf, filePathOf } from './file-address';
import { backoffMs, namesJobsAtOnce, parseInsufficient, retryAfterMs } from './gates';
import {
  HIDDEN_JOBS_WAIT,
  hiddenJobsHeld,
  hiddenJobsNotStarted,
  hiddenJobsWait,
} from './hidden-jobs';
import {
  describeProbe,
  honoursIdempotency,
  KEY_IN_PROGRESS,
  learnHonoured,
  probeFreshKey,
  probeKey,
  type ChargingEndpoint,
} from './idempotency';
import {
  EMPTY_ANSWERS_HELD_AT,
  emptyAnswerGapMs,
  PARTIAL_ANSWERS_COLLECTED_AT,
  isFinalStatus,
  jobOutcome,
  namesRefund,
  notFoundPollAtMs,
  REMOTE_PRIOR_MS,
} from './poller';
import {
  downloadResult,
  givePartialUp,
  RESULTS_HELD,
  ResultFileError,
  PARTIAL_GIVEN_UP,
  PARTIAL_NOTE,
  partialExportNote,
  partialGivenUpNote,
  resultsMissing,
  shotsAsked,
  storedUrls,
} from './result-download';
import type { StudioEngine } from './engine';
import { refuseAnotherJobsAnswer } from './job-answer';
import { jobFilePart } from './library';
import { tooSmallReason } from './photo-size';

/** Submissions refused with a 500 (charged, then refunded) are sent again at most this often. */
const MAX_RESUBMITS = 5;
/** A resent submission answered 409 (its first attempt still in progress) is asked this often. */
const MAX_IN_FLIGHT_WAITS = 10;
/** The words of a first create held by the service's long rate limit on creates (rev14 J1). */
const CREATES_REFUSED = 'the service refused new jobs for now';
/** A create's 503 asking for a longer wait is asked again after this (the run is not held for hours). */
const MAX_UNAVAILABLE_WAIT_MS = 10 * 60_000;
/** How a create answered 503 waits for its key probe (the service may have charged first). */
const CREATE_503_NOTE =
  'the service answered the submission 503, maybe after charging (a gateway answers so when the connection drops after the service acted): its key is asked about before any resend';
/** What a person needs once a 503'd create's key probe tells no charge (review rev21 C). */
const AFTER_503_ADVICE =
  "a service in maintenance answers 503 before any charge, a gateway after one, so whether it was charged is unknown; check the balance or the service's job list, then resubmit it (`dropshoot run --uncertain resubmit`, or Resubmit… on the studio board) or fail it";
/**
 * Tries of a paid result file that fail for a while (the connection drops, the body is cut short,
 * the host answers 5xx or 429) before the photo is held for the next run (review rev15 T1: retried
 * for ever, the run never ended). With the default back-off, about a minute in all.
 */
const DOWNLOAD_ATTEMPTS = 6;
/** 401s in a row to a paid job's polls before the key is taken as revoked (rev14 P2: one was a hiccup). */
const UNAUTHORIZED_POLLS_TO_REVOKED = 3;
/** The error a generations 500 kept under one key leaves (handleError): asked again, no probe. */
export const SAME_KEY_500 = /^the service answered 500 \((\d+)\) under this Idempotency-Key/;
/**
 * A probe's answer that the key is held (its reuse refused): the resend waits, unprobed, until the
 * first attempt's record must be written, and goes once a probe then shows the key still held.
 */
export const KEY_HELD_NOTE =
  'the service holds this Idempotency-Key (it refused its reuse with another body)';
/**
 * How long after a key's first send its record may still be in flight: a gateway may time out
 * (AWS API Gateway 29 s, nginx 60 s) while the backend goes on charging and only then stores it.
 */
const KEY_RECORD_GRACE_MS = 5 * 60_000;
/** A create's error when the client gave up waiting for its answer (client/failure.ts describeFailure). */
const OWN_TIMEOUT = /no answer in time/;
/** A key unknown to its probe right after our own timeout: asked again after the record wait. */
const KEY_LATE_NOTE =
  'the create was given up on by our own timeout and the service does not know its Idempotency-Key yet (it may record it only once the create is done): asked again once the record must be written';
/**
 * A resend refused 402 keeps its key (its first attempt may have been charged); after a few 402s
 * to that key once diamonds came, it is taken for a stored refusal replayed, and a person decides.
 */
const RESENT_402_NOTE = (times: number) =>
  `the resend under this Idempotency-Key was refused 402 (short of diamonds, ${times} time${times === 1 ? '' : 's'}); sent again once diamonds come`;
const RESENT_402_TIMES =
  /^the resend under this Idempotency-Key was refused 402 \(short of diamonds, (\d+) time/;
/** 402s to one resent key before a person decides (a stored 402 replayed never ends). */
const MAX_RESENT_402 = 3;

/** Why a photo overwritten after it was queued is not sent (folders.ts leaves its file alone). */
export const SOURCE_CHANGED =
  'the file was replaced after it was queued: nothing was sent or spent for this version; the new one is taken on its own (in `dropshoot run`: run again)';

/**
 * The job status of a photo whose create was answered with a job another photo holds (review
 * rev12 D1): paid, its result never delivered, never polled while that photo's job is live (the
 * job's result is that photo's). A photo given a finished job's id is held by the bytes it
 * delivers instead (heldResultOf), keeping its job status.
 */
export const ANOTHER_PHOTOS_JOB = 'another_photos_job';
/**
 * The job status, until its first answer, of a photo whose create was answered with the id of a
 * job another photo's item finished with (ids restarted after a redeploy, another service on the
 * same data folder; review rev23 N3). Whose job it is is told by the bytes it delivers, not its
 * URLs (review rev24 R4: results moved to a CDN; N3: files named after the job id): collected
 * unless a file is one the other photo collected (`heldResultOf`).
 */
export const JOB_ID_HANDED_OUT_AGAIN = 'job_id_handed_out_again';
const givenToLaterReason = (jobId: string, later: string) =>
  `paid, result not delivered: the service gave this photo's job id (${jobId}) to a photo sent after it too (${later}), so what the id names now may be that photo's job; nothing is exported as this one's and nothing was sent again: ask the service for this photo's job`;
const anotherPhotosJobReason = (jobId: string, holder: string) =>
  `paid, result not delivered: the service gave this photo another photo's job id (${jobId}, held by ${holder}), so that job's result is not exported as this one's; nothing was sent again (that would pay again): ask the service for this photo's job`;
/** The error the client leaves for a create answered 2xx with no job id in it (http.ts). */
const ANSWERED_WITHOUT_JOB_ID = /^the service answered 2\d\d to POST \S+ without a job id/;

/**
 * Upload URLs one photo may be handed that other photos hold before it gives up (a service naming
 * uploads from a coarse clock hands the same {id, url} to uploads in one tick: review rev25 D3).
 */
const MAX_SHARED_UPLOADS = 4;
/** Re-uploads after a shared upload URL go at least this far apart (times the photo's re-uploads). */
const SHARED_UPLOAD_GAP_MS = 2500;
const SHARED_UPLOAD_KEY = /-shared-(\d+)$/;
/**
 * The start of the note of a photo whose create went out on an upload URL the service then handed
 * to another photo, whose bytes may have replaced it before the job read it: its results may show
 * that photo's garment. Paid, never exported unseen: held (auto-approved batches) or left in review.
 */
export const UPLOAD_URL_SHARED = 'its upload URL was handed to another photo too';
const uploadUrlSharedNote = (url: string, other: string) =>
  `${UPLOAD_URL_SHARED} (${other}, after this photo's create went out: ${url}); the service may have read that photo's image for this job, so its results may show the other garment: check them before use (Generate again pays anew)`;
/** An item's error once its results are held for `UPLOAD_URL_SHARED` in an auto-approved batch. */
export const SHARED_UPLOAD_HELD = 'paid, results not exported: ';

/** The URLs in a stored JSON list (listed or result URLs), empty places left out. */
const storedUrlList = (json: string | null): string[] => {
  const list = JSON.parse(json ?? '[]') as unknown;
  return Array.isArray(list)
    ? list.filter((url): url is string => typeof url === 'string' && url !== '')
    : [];
};

const firstUploadKey = (itemId: string) => `upload-${itemId}`;
/** The upload key's end once a 413 asked for the photo smaller (sent so once, never again). */
const SMALLER_UPLOAD = '-smaller';
/** What a photo refused 413 is brought under, of the size refused (the service's limit unknown). */
const SMALLER_UPLOAD_SHARE = 0.75;
/** The states an item may still be cancelled in before its create goes out (queue-actions). */
const BEFORE_SUBMISSION: readonly ItemState[] = ['queued', 'uploading'];

export class Runner {
  /**
   * Items whose submission in flight resends a key an earlier attempt went out under (that one
   * may have been charged): no 4xx to it means "not paid".
   */
  private readonly resent = new Set<string>();
  /** When the last re-upload after a shared upload URL was set to go (they go apart). */
  private lastSharedUploadAt = 0;

  constructor(private readonly engine: StudioEngine) {}

  private get db() {
    return this.engine.db;
  }
  private get client(): ServiceClient {
    return this.engine.client;
  }
  private now(): Date {
    return this.engine.now();
  }
  private transition(id: string, patch: store.ItemPatch): void {
    this.engine.transition(id, patch);
  }
  private recipeOf(item: store.ItemRow): Recipe {
    return RecipeSchema.parse(JSON.parse(item.recipe));
  }

  async runStep(item: store.ItemRow): Promise<void> {
    switch (item.state) {
      case 'queued':
      case 'uploading':
        return this.upload(item);
      case 'submitting':
        return this.submit(item);
      case 'processing':
        return this.poll(item);
      case 'downloading':
        return this.download(item);
      case 'exporting':
        return this.exportItem(item);
      default:
        return;
    }
  }

  /** The create endpoint an item's submission goes to. */
  private endpointOf(item: store.ItemRow): ChargingEndpoint {
    return isReadyShootRecipe(this.recipeOf(item).request) ? 'catalog-jobs' : 'generations';
  }

  private honoursIdempotency(item: store.ItemRow): boolean {
    return honoursIdempotency(this.db, this.client.origin, this.endpointOf(item));
  }

  /**
   * Moves an item on only while it is still in `from`, in one transaction: a Cancel pressed
   * meanwhile (allowed until the create may be sent) stands. Whether it moved.
   */
  private moveOn(id: string, from: readonly ItemState[], patch: store.ItemPatch): boolean {
    const moved = this.db
      .transaction(() => store.updateItemIn(this.db, id, from, patch, this.now()))
      .immediate();
    if (moved) this.engine.emitItem(id);
    return moved;
  }

  private async upload(item: store.ItemRow): Promise<void> {
    let uploadKey = item.uploadKey;
    if (!uploadKey) {
      uploadKey = firstUploadKey(item.id);
      if (!this.moveOn(item.id, BEFORE_SUBMISSION, { uploadKey, state: 'uploading' })) return;
    }
    const source = await fs.promises.readFile(item.sourcePath);
    // Overwritten since it was queued (a hot-folder photo replaced under its name): these bytes
    // are another photo, which is queued on its own; sent here they would be paid for twice.
    if (createHash('sha256').update(source).digest('hex') !== item.sha256)
      throw new Error(SOURCE_CHANGED);
    const prepare = this.engine.options.prepareUpload;
    let prepared = prepare ? await prepare(source) : source;
    // Refused 413 as prepared (a service whose limit is below ours): brought under 3/4 of that.
    if (prepare && uploadKey.endsWith(SMALLER_UPLOAD))
      prepared = await prepare(source, Math.floor(prepared.length * SMALLER_UPLOAD_SHARE));
    const recipe = this.recipeOf(item);
    const tooSmall = await tooSmallReason(prepared, requestToolId(recipe.request));
    if (tooSmall) throw new Error(tooSmall);
    // Sent again after a 400 (its URL may have expired): in other bytes, since a service storing
    // uploads by content answers the same bytes with the same, expired, URL (prepare.ts).
    const data =
      uploadKey === firstUploadKey(item.id) ? prepared : withUploadNote(prepared, uploadKey);
    // The upload's echo of its key says nothing of the charging endpoints (learnt from their own).
    const uploaded = await this.client.upload(data, { idempotencyKey: uploadKey });
    const request = { ...recipe.request, images: fillPhoto(recipe.request.images, uploaded.url) };
    // Journal before the spending call: the request and its idempotency key. A photo cancelled
    // while its upload was in flight is never submitted (the upload cost nothing). A URL another
    // photo holds is never journalled as this one's (sharedUpload).
    const journalled = this.db
      .transaction(() => {
        const current = store.getItem(this.db, item.id);
        if (!current || !BEFORE_SUBMISSION.includes(current.state)) return [];
        const shared = this.sharedUpload(current, uploaded.url);
        if (shared) return shared;
        const moved = store.updateItemIn(
          this.db,
          item.id,
          BEFORE_SUBMISSION,
          {
            uploadUrl: uploaded.url,
            state: 'submitting',
            submitKey: `submit-${item.id}-${randomUUID()}`,
            submitRequest: JSON.stringify(request),
            submittedAt: null,
            attempts: 0,
            ...(SHARED_UPLOAD_KEY.test(uploadKey) ? { error: null } : {}),
          },
          this.now(),
        );
        return moved ? [item.id] : [];
      })
      .immediate();
    for (const id of journalled) this.engine.emitItem(id);
    if (!journalled.includes(item.id) || store.getItem(this.db, item.id)?.state !== 'submitting')
      return;
    const next = store.getItem(this.db, item.id);
    // The charge waits while the balance is being reconciled (its difference must be ours alone).
    if (next && !this.engine.stopping && !this.engine.spending.reconcilePending)
      await this.submit(next);
  }

  /**
   * An upload URL handed to this photo that other photos with other bytes hold (review rev25 D3:
   * a service naming uploads from a coarse clock; the later bytes replace the earlier under it):
   * sent on it, a photo is paid for with another's image. This photo uploads again, in other bytes
   * and later; so does a holder not sent yet (its object may hold this photo's bytes now); a
   * holder whose create went out is noted, its results never exported unseen. Run inside the
   * journalling transaction. The items changed, or null when nobody else holds the URL.
   */
  private sharedUpload(item: store.ItemRow, url: string): string[] | null {
    const address = fileAddressOf(url);
    const holders = (
      this.db
        .prepare(
          `SELECT id FROM items WHERE id != ? AND sha256 != ? AND upload_url IS NOT NULL
             AND instr(upload_url, ?) = 1`,
        )
        .pluck()
        .all(item.id, item.sha256, filePathOf(url)) as string[]
    )
      .map((id) => store.getItem(this.db, id))
      .filter(
        (row): row is store.ItemRow =>
          row !== undefined &&
          fileAddressOf(row.uploadUrl ?? '') === address &&
          // A job seen ended read its image long ago: nothing of it is at stake any more.
          (['uploading', 'submitting', 'processing'].includes(row.state) ||
            (row.jobId !== null && !isFinalStatus(row.jobStatus))),
      );
    if (holders.length === 0) return null;
    const now = this.now();
    const names = holders.map((h) => h.name).join(', ');
    const changed: string[] = [];
    const uploadAgain = (row: store.ItemRow, why: string): void => {
      const times = Number(SHARED_UPLOAD_KEY.exec(row.uploadKey ?? '')?.[1] ?? 0) + 1;
      if (times > MAX_SHARED_UPLOADS) {
        store.updateItem(
          this.db,
          row.id,
          {
            state: 'failed',
            uploadUrl: null,
            submitKey: null,
            submitRequest: null,
            reserved: 0,
            error: `the service handed this photo ${times - 1} upload URLs other photos held (${why}); it was never sent on one of them, nothing was spent: check the service's uploads, then run again`,
          },
          now,
        );
        changed.push(row.id);
        return;
      }
      // Apart from every other re-upload, so that they do not share one tick of the clock again;
      // further apart each time the same photo meets one (a coarser clock).
      const at = Math.max(now.getTime(), this.lastSharedUploadAt) + SHARED_UPLOAD_GAP_MS * times;
      this.lastSharedUploadAt = at;
      store.updateItem(
        this.db,
        row.id,
        {
          state: 'uploading',
          uploadKey: `${firstUploadKey(row.id)}-shared-${times}`,
          uploadUrl: null,
          submitKey: null,
          submitRequest: null,
          submittedAt: null,
          attempts: 0,
          waitReason: 'service_error',
          waitUntil: new Date(at).toISOString(),
          error: `the service handed this photo an upload URL another photo holds (${why}): uploading it again in other bytes, nothing was sent or spent on it`,
        },
        now,
      );
      changed.push(row.id);
    };
    for (const holder of holders) {
      const sent = holder.submittedAt !== null || holder.jobId !== null;
      if (!sent && holder.state === 'submitting') {
        uploadAgain(
          holder,
          `${item.name} was given it after it, maybe replacing its bytes: ${url}`,
        );
      } else if (sent && !(holder.note ?? '').startsWith(UPLOAD_URL_SHARED)) {
        store.updateItem(this.db, holder.id, { note: uploadUrlSharedNote(url, item.name) }, now);
        changed.push(holder.id);
      }
    }
    uploadAgain(item, `held by ${names}: ${url}`);
    return changed;
  }

  private async submit(item: store.ItemRow): Promise<void> {
    if (!item.submitRequest || !item.submitKey) throw new Error('submission journal is missing');
    const request = JSON.parse(item.submitRequest) as Record<string, unknown>;
    // Creates wait on a create's long rate limit (polls go on): held unsent, nothing charged.
    const gates = this.engine.gates;
    if (!item.submittedAt && gates.createsLimited(this.now())) {
      this.holdForCreates(item.id, gates.createsLimitedUntil, null);
      return;
    }
    // Nor is a photo paid for while the service refuses to show paid jobs (its upload went on).
    if (!item.submittedAt && !this.engine.mayStartPhoto(item.id)) {
      this.transition(item.id, {
        waitReason: 'jobs_hidden',
        error: hiddenJobsNotStarted(gates.hiddenJobs.refusal()!),
      });
      return;
    }
    // An attempt under this key went out before: it may have been charged.
    const resend = item.submittedAt ? await this.mayResend(item, request, item.submitKey) : null;
    if (resend === false) return;
    if (item.submittedAt) this.resent.add(item.id);
    else this.resent.delete(item.id);
    // Answered from the key's record, a resend charges nothing: the charge is the attempt before.
    // Made before this run's opening balance (a run killed mid-create), it keeps its time, so it
    // is not this run's spend, nor in its readings, nor against its ceiling (review rev14 K1).
    const earlierRunsCharge =
      resend === 'stored' &&
      Date.parse(item.submittedAt ?? '') < this.engine.spending.openingReadAt;
    const submittedAt = earlierRunsCharge ? item.submittedAt! : this.now().toISOString();
    // The key's first send (none under this key may have reached the service before it).
    this.transition(item.id, {
      submittedAt,
      ...(item.submittedAt ? {} : { keySentAt: submittedAt }),
    });
    const endpoint = this.endpointOf(item);
    const created =
      endpoint === 'catalog-jobs'
        ? await this.client.createCatalogJob(
            request as Parameters<ServiceClient['createCatalogJob']>[0],
            { idempotencyKey: item.submitKey },
          )
        : await this.client.createGeneration(
            request as Parameters<ServiceClient['createGeneration']>[0],
            { idempotencyKey: item.submitKey },
          );
    this.resent.delete(item.id);
    // The key's echo (created.idempotencyHonoured) is no evidence: only a replay probe is.
    await this.accept(item, request, created as Record<string, unknown>);
  }

  /** A create's answer (or its replay under the same key) recorded: the item is charged. */
  private async accept(
    item: store.ItemRow,
    request: Record<string, unknown>,
    created: Record<string, unknown>,
  ): Promise<void> {
    if (this.endpointOf(item) === 'catalog-jobs') {
      const cost = Number(created.diamondCost);
      const total = Number(created.packTotal) || null;
      // A subset answered with the whole set's packTotal would teach a fraction of the shot's
      // price (and let --max-diamonds be crossed): learnt only when the counts agree.
      const asked = Array.isArray(request.shotIds) ? request.shotIds.length : total;
      if (cost > 0 && total && asked === total && cost % total === 0)
        this.engine.spending.learnPrice(SHOT_PRICE, cost / total);
      this.charged(
        item,
        // A replayed answer may carry the job as `id` only.
        String(created.mediaItemId ?? created.id),
        Number.isFinite(cost) && cost >= 0
          ? { diamonds: cost, sure: true }
          : (this.engine.quoteOf(item) ?? { diamonds: 0, sure: false }),
        total,
        String(created.status ?? 'pack_processing'),
      );
      return;
    }
    await this.engine.spending.loadPrices().catch(() => undefined);
    this.charged(
      item,
      String(created.id),
      this.engine.spending.toolPrice(String(request.toolId ?? jobGroup(item.kind, item.toolId))),
      null,
      String(created.status ?? 'processing'),
    );
    // Answered done with its results and no job id (a synchronous service): the results are kept
    // as listed and collected at once, never polled (the service knows the job by no id).
    if (isUnnamedJob(String(created.id)) && Array.isArray(created.resultUrls)) {
      this.rememberListed(item, created.resultUrls as string[]);
      this.transition(item.id, { pollAt: this.now().toISOString() });
    }
  }

  /**
   * A create whose answer was lost goes again under its key only once the service shows it holds
   * that key: the key itself is probed (a body the spec refuses for free). Replayed: that is the
   * lost answer, collected without sending again. Refused as a reuse of the key (409/422 naming
   * the key): the first attempt arrived; the resend waits until its record must be written (a
   * backend may go on after a gateway timeout, and a record in flight is no answer), then the key
   * is probed again: still held, the resend gets the stored answer; forgotten (the record expired
   * meanwhile), a person decides. Forgotten (never kept, expired, or never reached, which a probe cannot tell
   * apart): a person decides. Returns whether to send the real request again now: 'stored' when a
   * probe just showed the key held (the resend gets the stored answer), 'send' otherwise.
   */
  private async mayResend(
    item: store.ItemRow,
    request: Record<string, unknown>,
    key: string,
  ): Promise<'send' | 'stored' | false> {
    if (this.client.origin === 'embedded') return 'send';
    // A generations 500 is an answer (spec 4.6), not a lost one: asked again under its key with no
    // probe (handleError). The spec says nothing of a catalog-jobs 500: that one is probed.
    if (SAME_KEY_500.test(item.error ?? '') && this.endpointOf(item) === 'generations')
      return 'send';
    // A key a probe showed held waits out its record's grace unprobed; when the resend is due the
    // key is probed again, since the record may have expired meanwhile (a store keeping records
    // 90 s charges a resend after that anew).
    if (item.error?.startsWith(KEY_HELD_NOTE) && this.now().getTime() < this.recordDue(item))
      return this.waitForRecord(item);
    const endpoint = this.endpointOf(item);
    // A probe refused 402/429 goes to handleError as a resend: key and mark kept.
    this.resent.add(item.id);
    const probe = await probeKey(this.client, endpoint, key);
    if (probe.kind === 'unknown') {
      const err = probe.error;
      if (err instanceof ApiError && (err.status === 402 || err.status === 429)) throw err;
      this.resent.delete(item.id);
      this.awaitProbe(item, err);
      return false;
    }
    this.resent.delete(item.id);
    if (probe.kind === 'forgotten') {
      // Our own timeout gave the create up while the service may still be working on it, and a
      // store that records the key when its create is done (no 409 in flight) shows it unknown
      // until then (review rev17 S2: taken as final, a paid photo was left uncertain for good):
      // asked again once its record must be written, like a key shown held; unknown then, final.
      if (OWN_TIMEOUT.test(item.error ?? '') && this.now().getTime() < this.recordDue(item)) {
        this.transition(item.id, { error: `${KEY_LATE_NOTE} (${probe.message})` });
        return this.waitForRecord(item);
      }
      if (item.error?.startsWith(CREATE_503_NOTE)) {
        // The words a person needs: the 503 may as well have come before any charge (review rev21 C).
        this.markUncertain(
          item,
          `the submission was answered 503 and the service does not hold its Idempotency-Key (${probe.message}): ${AFTER_503_ADVICE}`,
        );
        return false;
      }
      // A 2xx without a job id is a charge whose job is unknown: said so, not "lost".
      const lost = ANSWERED_WITHOUT_JOB_ID.test(item.error ?? '')
        ? item.error!
        : 'the answer to the submission was lost';
      if (item.error?.startsWith(KEY_HELD_NOTE)) {
        // It did keep the key a while: told so, not as a service that ignores keys (review rev33
        // D5). Not resent at once when first shown held: a key arrived may be in flight, and a
        // service may process the same key anew then (a gateway's timeout: two charges).
        this.markUncertain(
          item,
          `${lost}; the service held its Idempotency-Key when first asked (the create arrived, maybe charged) and had forgotten it when asked again ${Math.round((this.engine.options.keyRecordGraceMs ?? KEY_RECORD_GRACE_MS) / 1000)} s after it was sent (${probe.message}): it keeps key records shorter than that, so its stored answer is gone`,
        );
        return false;
      }
      this.markUncertain(
        item,
        `${lost}; this service does not confirm Idempotency-Key: asked under the same key with a body it must refuse, it refused the body (${probe.message})`,
      );
      return false;
    }
    if (probe.kind === 'replayed') {
      // A job another photo holds is that photo's, whatever answered the probe (a cache keyed on
      // something else): taken as this one's, two photos export one image and this one's is lost.
      // No evidence the service keeps answers per key either.
      const holder = this.db
        .prepare('SELECT name FROM items WHERE job_id = ? AND id != ? LIMIT 1')
        .get(probe.jobId, item.id) as { name: string } | undefined;
      if (holder) {
        this.markUncertain(
          item,
          `the answer to the submission was lost and the probe of its Idempotency-Key was answered with job ${probe.jobId}, which ${holder.name} already holds: not this photo's job`,
        );
        return false;
      }
      // A replay is the key's own answer only if the service refuses a key never sent: one that
      // replays any refused create may name a job whose photo has not recorded it yet. One
      // request more per replay, counted by the client like the probe (daily cap).
      this.resent.add(item.id);
      const control = await probeFreshKey(this.client, endpoint);
      if (control.kind === 'unknown') {
        // No answer about keys (down, capped): probed again later like a probe that told nothing.
        const err = control.error;
        if (err instanceof ApiError && (err.status === 402 || err.status === 429)) throw err;
        this.resent.delete(item.id);
        this.awaitProbe(item, err);
        return false;
      }
      this.resent.delete(item.id);
      if (control.kind !== 'forgotten') {
        this.markUncertain(
          item,
          `the answer to the submission was lost and the probe of its Idempotency-Key was answered with job ${probe.jobId}, but a control probe under a key never sent was answered ${control.kind === 'replayed' ? 'with a job too' : 'as a known key'} (${describeProbe(control)}): the service does not tell keys apart, not evidence the job is this photo's`,
        );
        return false;
      }
    }
    // A replay (its control refused), or a conflict about the key itself: records kept per key.
    learnHonoured(this.db, this.client.origin, endpoint);
    if (probe.kind === 'replayed') {
      await this.accept(item, request, probe.created);
      return false;
    }
    if (!probe.inFlight) {
      // Held now and its record due by now: resent at once, it gets the stored answer.
      if (this.now().getTime() >= this.recordDue(item)) {
        this.transition(item.id, { error: null });
        return 'stored';
      }
      this.transition(item.id, { error: `${KEY_HELD_NOTE}: ${probe.message}` });
      return this.waitForRecord(item);
    }
    // The first attempt is still being processed (maybe charged): its answer comes to this key.
    const attempts = item.attempts + 1;
    if (attempts > MAX_IN_FLIGHT_WAITS) {
      this.markUncertain(
        item,
        `the first attempt under this Idempotency-Key was still being processed after ${MAX_IN_FLIGHT_WAITS} asks`,
      );
      return false;
    }
    this.transition(item.id, {
      attempts,
      waitReason: 'service_error',
      waitUntil: this.backoffUntil(attempts),
      error: `the first attempt under this Idempotency-Key is still being processed; asking again: ${probe.message}`,
    });
    return false;
  }

  /** A first create held by the service's long rate limit on creates (`Gates.createsLimitedUntil`). */
  private holdForCreates(
    id: string,
    until: number,
    refusal: string | null,
    patch: store.ItemPatch = {},
  ): void {
    const at = new Date(until).toISOString();
    this.transition(id, {
      ...patch,
      waitReason: 'service_error',
      waitUntil: at,
      error: `${CREATES_REFUSED}${refusal ? ` (429: ${refusal})` : ''}: trying again after ${at.slice(11, 16)} UTC, or once a job of ours ends; paid jobs are still collected`,
    });
  }

  /** A job of ours ended: creates held on a limit met while jobs ran may try again now. */
  private jobEnded(): void {
    if (!this.engine.gates.jobEnded(this.now())) return;
    for (const held of store.itemsInStates(this.db, ['submitting']))
      if (held.waitReason === 'service_error' && held.error?.startsWith(CREATES_REFUSED))
        this.transition(held.id, { waitUntil: null });
  }

  /** When the key's record must be written: a record grace after the key first went out. */
  private recordDue(item: store.ItemRow): number {
    const sentAt = Date.parse(item.keySentAt ?? item.submittedAt ?? '');
    const grace = this.engine.options.keyRecordGraceMs ?? KEY_RECORD_GRACE_MS;
    return (Number.isFinite(sentAt) ? sentAt : this.now().getTime()) + grace;
  }

  /** When a create answered 503 is taken up again: the wait it asked for (bounded), else `backoff`. */
  private unavailableUntil(err: ApiError, now: Date, backoff: string): string {
    const asked = retryAfterMs(err);
    return asked === null
      ? backoff
      : new Date(now.getTime() + Math.min(asked, MAX_UNAVAILABLE_WAIT_MS)).toISOString();
  }

  /** A key shown held waits (no resend) until its record must be written, then is probed again. */
  private waitForRecord(item: store.ItemRow): false {
    this.transition(item.id, {
      waitReason: 'service_error',
      waitUntil: new Date(this.recordDue(item)).toISOString(),
    });
    return false;
  }

  /** A probe that told nothing (service down, an odd answer): asked again later, bounded. */
  private awaitProbe(item: store.ItemRow, err: unknown): void {
    const message = err instanceof Error ? err.message : JSON.stringify(err);
    const attempts = item.attempts + 1;
    // A create's 503 stays in the note while its probe is asked again (review rev22 F1: a probe
    // meeting the same maintenance lost it, and the photo got the wrong words).
    const after503 = item.error?.startsWith(CREATE_503_NOTE) ?? false;
    if (attempts >= (this.engine.options.maxAttempts ?? 12)) {
      const told = `${attempts} asks whether the service kept its Idempotency-Key told nothing (${message})`;
      this.markUncertain(
        item,
        after503
          ? `the submission was answered 503 and ${told}: ${AFTER_503_ADVICE}`
          : `the answer to the submission was lost and ${told}`,
      );
      return;
    }
    this.transition(item.id, {
      attempts,
      waitReason: err instanceof ApiError && err.status === 0 ? 'offline' : 'service_error',
      waitUntil: this.backoffUntil(attempts),
      error: `${after503 ? `${CREATE_503_NOTE}; ` : ''}asking whether the service kept this Idempotency-Key: ${message}`,
    });
  }

  private backoffUntil(attempts: number): string {
    const { baseMs, maxMs } = this.engine.options.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    const wait = backoffMs(attempts, baseMs, maxMs, this.engine.options.random ?? Math.random);
    return new Date(this.now().getTime() + wait).toISOString();
  }

  private charged(
    item: store.ItemRow,
    jobId: string,
    price: { diamonds: number; sure: boolean },
    packTotal: number | null,
    status: string,
  ): void {
    const delay = this.engine.poller.firstPollDelayMs(
      jobGroup(item.kind, item.toolId),
      this.engine.requestsScarce(),
      {
        remote: this.engine.remote,
        probe: this.engine.isProbe(item),
      },
    );
    const pollAt = new Date(this.now().getTime() + delay).toISOString();
    // A job another photo holds (a buggy service answering two creates with one id): its result
    // is that photo's. This create was charged all the same; a person decides, nothing is resent.
    // What the charge records either way: the job, its price, the reservation it replaces.
    const charge = {
      jobId,
      price: price.diamonds,
      diamonds: price.diamonds,
      priceSure: price.sure ? 1 : 0,
      reserved: 0,
      packTotal,
      attempts: 0,
    };
    const holders = this.holdersOf(jobId, item.id);
    const live = holders.find((h) => h.live);
    if (live) {
      this.transition(item.id, {
        ...charge,
        jobStatus: ANOTHER_PHOTOS_JOB,
        state: 'failed',
        pollAt: null,
        error: anotherPhotosJobReason(jobId, live.name),
      });
      this.engine.balanceMoved(-price.diamonds);
      return;
    }
    this.transition(item.id, {
      ...charge,
      // An id we finished with, handed out again: its first answer tells whose job it is.
      jobStatus: holders.length > 0 ? JOB_ID_HANDED_OUT_AGAIN : status,
      state: 'processing',
      pollAt,
      seenRunningAt: null,
      error: null,
      ...(RESENT_402_TIMES.test(item.note ?? '') ? { note: null } : {}),
    });
    this.engine.balanceMoved(-price.diamonds);
    this.engine.gates.createCharged();
  }

  private markUncertain(item: store.ItemRow, why: string): void {
    const cost = item.price || this.engine.quoteOf(item)?.diamonds || 0;
    // Its charge may be in the balance's next reading even once a resubmission clears the time.
    const sentAt = store.getItem(this.db, item.id)?.submittedAt ?? item.submittedAt;
    this.engine.spending.answerLost(
      item.id,
      sentAt ? Date.parse(sentAt) : this.now().getTime(),
      cost,
    );
    this.transition(item.id, {
      uncertain: 1,
      waitReason: 'uncertain',
      note: `${why}; check the service before resubmitting (resubmitting may cost ${cost} more diamond${cost === 1 ? '' : 's'} if the first one was charged)`,
    });
  }

  /** Jobs of ours the service is still processing (paid, not yet seen done). */
  private jobsInFlight(): number {
    return this.db
      .prepare("SELECT COUNT(*) FROM items WHERE state = 'processing' AND job_id IS NOT NULL")
      .pluck()
      .get() as number;
  }

  /**
   * Other photos' items that hold `jobId` (not those given it as another's): whether their job is
   * still live (never seen ended), when they were sent, whether their answers listed results, and
   * the sha256 of each result file they collected (as stored, and as sent when it was converted).
   */
  private holdersOf(
    jobId: string,
    itemId: string,
  ): {
    name: string;
    live: boolean;
    submittedAt: string | null;
    listed: boolean;
    collected: Set<string>;
  }[] {
    const rows = this.db
      .prepare(
        `SELECT id, name, job_status AS jobStatus, submitted_at AS submittedAt,
                listed_urls AS listedUrls, result_urls AS resultUrls
           FROM items WHERE job_id = ? AND id != ? AND job_status IS NOT ?`,
      )
      .all(jobId, itemId, ANOTHER_PHOTOS_JOB) as {
      id: string;
      name: string;
      jobStatus: string | null;
      submittedAt: string | null;
      listedUrls: string | null;
      resultUrls: string | null;
    }[];
    return rows.map((row) => ({
      name: row.name,
      live: !isFinalStatus(row.jobStatus),
      submittedAt: row.submittedAt,
      listed: [row.listedUrls, row.resultUrls].some((json) => storedUrlList(json).length > 0),
      collected: new Set(
        store.resultsOf(this.db, row.id).flatMap((r) => [r.sha256, ...this.sentSha(r, jobId)]),
      ),
    }));
  }

  /** The sha256 of a result as sent, when the library stored it converted (a TIFF as PNG). */
  private sentSha(result: { sha256: string; file: string }, jobId: string): string[] {
    const sidecar = this.engine.library.absolute(
      path.join(path.dirname(result.file), `${result.sha256}.${jobFilePart(jobId)}.json`),
    );
    try {
      const told = JSON.parse(fs.readFileSync(sidecar, 'utf8')) as {
        convertedFrom?: { sha256?: unknown };
      };
      const sent = told.convertedFrom?.sha256;
      return typeof sent === 'string' ? [sent] : [];
    } catch {
      return [];
    }
  }

  /** For a photo given a job id another photo holds: that photo, if its job is live (D1). */
  private liveHolderOf(item: store.ItemRow): string | undefined {
    if (!item.jobId) return undefined;
    return this.holdersOf(item.jobId, item.id).find((h) => h.live)?.name;
  }

  /**
   * For a result file downloaded for a photo whose job id another photo held before it (sent
   * earlier): that photo, if it collected these very bytes (its job's result, not this photo's:
   * review rev24 R4, the same id answered with the files moved to another host), or if it listed
   * results and collected none yet (nothing to tell them apart by: held, and a rerun decides
   * again). Bytes it never collected are this photo's own job's (ids restarted, rev23 N3), however
   * alike the URLs (a service naming files after the job id lists the same ones).
   */
  private heldResultOf(item: store.ItemRow, data: Buffer): string | undefined {
    if (!item.jobId) return undefined;
    const earlier = this.holdersOf(item.jobId, item.id).filter(
      (h) => h.submittedAt === null || !item.submittedAt || h.submittedAt <= item.submittedAt,
    );
    if (earlier.length === 0) return undefined;
    const sha = createHash('sha256').update(data).digest('hex');
    return earlier.find((h) => h.collected.has(sha) || (h.listed && h.collected.size === 0))?.name;
  }

  /**
   * A photo sent after this one that was given its job id (ids restarted after a redeploy, or a
   * service answering every create with one id): what the id names now may be that photo's job,
   * and its files exported as this photo's were another photo's (review rev26 2). Its name.
   */
  private laterHolderOf(item: store.ItemRow): string | undefined {
    if (!item.jobId || !item.submittedAt) return undefined;
    const sentAt = item.submittedAt;
    return this.holdersOf(item.jobId, item.id).find(
      (h) => h.submittedAt !== null && h.submittedAt > sentAt,
    )?.name;
  }

  /** One poll; a job still running is given its next poll time and releases everything it held. */
  private async poll(item: store.ItemRow): Promise<void> {
    if (!item.jobId) throw new Error('no job id recorded');
    const givenAnothers = item.jobStatus === ANOTHER_PHOTOS_JOB;
    // Taken up again (a later run, Retry) while the other photo's job is live: never collected here.
    const liveHolder = givenAnothers ? this.liveHolderOf(item) : undefined;
    if (liveHolder) {
      this.transition(item.id, {
        state: 'failed',
        pollAt: null,
        error: anotherPhotosJobReason(item.jobId, liveHolder),
      });
      return;
    }
    // Results stored already: the job was collected `partial` and is asked once for the rest.
    const again = item.resultUrls !== null;
    let job: Awaited<ReturnType<ServiceClient['getGeneration']>>;
    try {
      if (isUnnamedJob(item.jobId)) job = this.createAnswered(item);
      else {
        job = await this.client.getGeneration(item.jobId);
        this.engine.gates.hiddenJobs.shown();
      }
      refuseAnotherJobsAnswer(this.db, job, item.jobId);
    } catch (err) {
      if (!(again && err instanceof ApiError && err.status === 404)) throw err;
      // The service forgot the job: what was collected stays exported, the rest is given up.
      givePartialUp(this.db, item.id);
      this.transition(item.id, {
        state: 'downloading',
        pollAt: null,
        attempts: 0,
        error: null,
        note: partialGivenUpNote(item, resultsMissing(item), 'the service no longer knows it'),
      });
      return;
    }
    const now = this.now();
    // Every URL any answer listed is kept (a restart keeps them): a catalog job may list each shot
    // once, where it completes, and end listing none (review rev15 C2: 12 paid, 0 collected).
    const seen = this.rememberListed(item, job.resultUrls);
    let outcome = jobOutcome(job, shotsAsked(item), item.packCompleted ?? 0);
    if (
      (outcome.kind === 'empty' || outcome.kind === 'partial') &&
      seen.length > job.resultUrls.length
    ) {
      // An answer that says the job is over and lists fewer than were listed before: all of them.
      const shots = job.shots?.flatMap((shot) => shot.resultUrls);
      job = {
        ...job,
        resultUrls: seen,
        ...(shots && shots.length !== seen.length ? { shots: undefined } : {}),
      };
      outcome = jobOutcome(job, shotsAsked(item), item.packCompleted ?? 0);
    }
    const stored = again ? storedUrls(this.db, item.id).length : 0;
    if (
      again &&
      ((outcome.kind !== 'partial' && outcome.kind !== 'delivered') ||
        job.resultUrls.length < stored)
    ) {
      // Asked for the rest, it answers with less than it listed before (no results, a failure
      // word, a shorter list): nothing new; what was collected stays (never read as a refund).
      this.transition(item.id, { state: 'downloading', pollAt: null, attempts: 0, error: null });
      return;
    }
    const progress =
      job.packTotal !== undefined
        ? {
            packTotal: job.packTotal,
            packCompleted: job.packCompleted ?? null,
            packFailed: job.packFailed ?? null,
          }
        : {};
    if (outcome.kind === 'empty') {
      // Called done but no results (yet): paid, so never taken as refunded. Asked again a few
      // times, then held for a person; a retry or the next run collects the same job again.
      const seen = isFinalStatus(item.jobStatus) ? item.attempts + 1 : 1;
      const held = seen >= EMPTY_ANSWERS_HELD_AT;
      this.transition(item.id, {
        ...progress,
        jobStatus: 'completed',
        attempts: held ? 0 : seen,
        ...(held
          ? {
              state: 'failed',
              pollAt: null,
              error: `paid without results: ${outcome.message} (${seen} answers); ${outcome.paidShots ? `${outcome.paidShots} shot(s) paid for and never listed, ` : ''}not refunded, retry to collect the same job (never submitted again)`,
            }
          : {
              pollAt: new Date(now.getTime() + emptyAnswerGapMs(seen)).toISOString(),
              error: outcome.message,
            }),
      });
      return;
    }
    // Results lagging behind the counters: asked again (never resubmitted) before collecting.
    // Asked again for the rest of a job collected `partial`: one answer, collected as it stands.
    const partialSeen =
      outcome.kind !== 'partial'
        ? 0
        : again
          ? PARTIAL_ANSWERS_COLLECTED_AT
          : isFinalStatus(item.jobStatus)
            ? item.attempts + 1
            : 1;
    if (outcome.kind === 'partial' && partialSeen < PARTIAL_ANSWERS_COLLECTED_AT) {
      this.transition(item.id, {
        ...progress,
        jobStatus: 'completed',
        attempts: partialSeen,
        pollAt: new Date(now.getTime() + emptyAnswerGapMs(partialSeen)).toISOString(),
        error: outcome.message,
      });
      return;
    }
    if (outcome.kind === 'running') {
      const elapsed = item.submittedAt ? now.getTime() - Date.parse(item.submittedAt) : 0;
      const gap = this.engine.poller.nextGapMs(
        jobGroup(item.kind, item.toolId),
        elapsed,
        this.engine.requestsScarce(),
        now.getTime() - this.engine.startedAt,
      );
      this.transition(item.id, {
        ...progress,
        jobStatus: String(job.status),
        seenRunningAt: now.toISOString(),
        pollAt: new Date(now.getTime() + gap).toISOString(),
        attempts: 0,
        error: null,
      });
      return;
    }
    // Failed or done: the job no longer counts towards a limit on jobs at once.
    this.jobEnded();
    const poller = this.engine.poller;
    const firstSample = poller.sampleCount(jobGroup(item.kind, item.toolId)) === 0;
    // Seen done at a first poll aimed by the prior, a job says only that it took less: no sample.
    const waitedForPrior =
      item.submittedAt !== null && now.getTime() - Date.parse(item.submittedAt) >= REMOTE_PRIOR_MS;
    const informative = !(
      firstSample &&
      item.seenRunningAt === null &&
      this.engine.remote &&
      waitedForPrior &&
      !this.engine.probeOf(jobGroup(item.kind, item.toolId), item.id)
    );
    if (item.submittedAt && informative) {
      this.engine.poller.learn(jobGroup(item.kind, item.toolId), {
        submittedAt: Date.parse(item.submittedAt),
        seenRunningAt: item.seenRunningAt ? Date.parse(item.seenRunningAt) : null,
        doneAt: now.getTime(),
        followedSince: this.engine.startedAt,
        plannedFirstPollMs: this.engine.poller.firstPollDelayMs(
          jobGroup(item.kind, item.toolId),
          true,
          {
            remote: this.engine.remote,
            probe: this.engine.probeOf(jobGroup(item.kind, item.toolId), item.id),
          },
        ),
      });
    }
    if (outcome.kind === 'failed') {
      // The service's own `failed`: it refunded the charge; nothing stays spent. Photos its charge
      // held at the batch's ceiling may fit now (rev14 R1b: held for the rest of the run).
      if (item.batchId) this.engine.clearWaits('ceiling', { batchId: item.batchId });
      this.transition(item.id, {
        ...progress,
        state: 'failed',
        jobStatus: 'failed',
        error: outcome.message,
        diamonds: 0,
        priceSure: 1,
        pollAt: null,
      });
      this.engine.balanceMoved(item.diamonds);
      return;
    }
    const shotMap = job.shots?.flatMap((s) => s.resultUrls.map(() => s.shotId)) ?? null;
    const failedShots = job.shots?.filter((s) => s.status === 'failed').map((s) => s.shotId) ?? [];
    const packFailed =
      failedShots.length === 0 && (job.packFailed ?? 0) > 0
        ? `${job.packFailed} shot(s) failed${job.errorMessage ? `: ${job.errorMessage}` : ''}`
        : null;
    // A job ended `failed` that lists results (spec 2.3 lists none) is collected and counted as
    // spend: a service that delivers may keep the charge (a pack generation whose shots partly
    // failed, spec 3.2), and taking it for refunded let a batch pass its ceiling (review rev16
    // A1/A2: 24 taken under --max-diamonds 8). A refund that comes shows in the balance.
    const failedYetListed = namesRefund(job.status);
    const listedNote = failedShots.length
      ? `${failedShots.length} shot(s) failed: ${failedShots.join(', ')} (retry them alone)`
      : outcome.kind === 'partial'
        ? [
            `${outcome.message} after ${partialSeen} answers: collected the ${outcome.listed} listed`,
            packFailed,
          ]
            .filter(Boolean)
            .join('; ')
        : (packFailed ?? item.note);
    const failedYetListedNote = failedYetListed
      ? `the service reported the job as ${String(job.status)}${job.errorMessage ? ` (${job.errorMessage})` : ''} yet listed results: collected, counted as spend (a refund, if one comes, shows in the balance)`
      : null;
    this.transition(item.id, {
      ...progress,
      state: 'downloading',
      jobStatus: 'completed',
      pollAt: null,
      resultUrls: JSON.stringify(job.resultUrls),
      // From here a file's 404 is first taken for one not readable yet (result-download.ts).
      resultsListedAt: now.toISOString(),
      attempts: 0,
      shotMap: shotMap ? JSON.stringify(shotMap) : null,
      failedShots: failedShots.length ? JSON.stringify(failedShots) : null,
      note:
        failedYetListedNote && !listedNote?.includes(failedYetListedNote)
          ? [failedYetListedNote, listedNote].filter(Boolean).join('; ')
          : listedNote,
      ...(outcome.kind === 'partial' ? { error: null } : {}),
    });
  }

  /** A job answered done at its create with no id: its answer is the results it listed then. */
  private createAnswered(item: store.ItemRow): Awaited<ReturnType<ServiceClient['getGeneration']>> {
    const listed = JSON.parse(store.getItem(this.db, item.id)?.listedUrls ?? '[]') as string[];
    return {
      id: item.jobId ?? '',
      status: 'completed',
      resultUrls: listed,
      errorMessage: null,
    } as Awaited<ReturnType<ServiceClient['getGeneration']>>;
  }

  /**
   * Adds the URLs of a poll's answer to those the job's answers listed before (stored), and
   * returns them all, first seen first. One file is one entry, its latest URL kept: a signed URL
   * differs from poll to poll only in its query.
   */
  private rememberListed(item: store.ItemRow, urls: readonly string[]): string[] {
    const before = JSON.parse(store.getItem(this.db, item.id)?.listedUrls ?? '[]') as string[];
    const byFile = new Map(before.map((url) => [fileAddressOf(url), url]));
    for (const url of urls) byFile.set(fileAddressOf(url), url);
    const all = [...byFile.values()];
    if (JSON.stringify(all) !== JSON.stringify(before))
      store.updateItem(this.db, item.id, { listedUrls: JSON.stringify(all) }, this.now());
    return all;
  }

  private async download(item: store.ItemRow): Promise<void> {
    const have = new Set(store.resultsOf(this.db, item.id).map((r) => r.n));
    // Read as stored at each step: a fresh-URL poll may list more (the rest of a partial job).
    for (let n = 0; n < storedUrls(this.db, item.id).length; n++) {
      if (have.has(n)) continue;
      let got: Awaited<ReturnType<typeof downloadResult>>;
      try {
        got = await downloadResult(this.engine, store.getItem(this.db, item.id) ?? item, n);
      } catch (err) {
        if (!(err instanceof ResultFileError)) throw err;
        this.resultFileTrouble(item.id, n, err);
        return;
      }
      const { data, mime } = got;
      // A job id another photo held before: these bytes may be that photo's result (never this one's).
      // Or its id was given to a photo sent after it, whose job the id may name now.
      const holder = this.heldResultOf(item, data);
      const later = holder ? undefined : this.laterHolderOf(item);
      if (holder || later) {
        // Its job status stays the job's: this photo still holds the id, and the earlier photo,
        // taken up again, must see it (laterHolderOf), not only a create given a live job's id.
        this.transition(item.id, {
          state: 'failed',
          pollAt: null,
          attempts: 0,
          error: holder
            ? anotherPhotosJobReason(item.jobId ?? '', holder)
            : givenToLaterReason(item.jobId ?? '', later!),
        });
        return;
      }
      // Read after the download: a fresh-URL poll may have extended the shot map with the URLs.
      const shots = JSON.parse(store.getItem(this.db, item.id)?.shotMap ?? 'null') as
        string[] | null;
      const stored = await this.engine.library.store(data, mime, {
        sourceSha256: item.sha256,
        sourceName: item.name,
        recipe: JSON.parse(item.recipe) as unknown,
        jobId: item.jobId ?? '',
        shotId: shots?.[n] ?? null,
        service: this.client.origin,
        diamonds: item.diamonds,
        submittedAt: item.submittedAt,
        completedAt: this.now().toISOString(),
        downloadedAt: this.now().toISOString(),
      });
      const resultId = `res_${createHash('sha256').update(`${item.id}:${n}`).digest('hex').slice(0, 24)}`;
      store.insertResult(this.db, {
        id: resultId,
        itemId: item.id,
        n,
        shotId: shots?.[n] ?? null,
        sha256: stored.sha256,
        mime: stored.mime,
        file: stored.file,
        thumb: stored.thumb,
        createdAt: this.now().toISOString(),
      });
      const row = store.getResult(this.db, resultId);
      if (row) this.engine.events.emit('result.added', store.resultView(row));
      // Tries count in a row: a file that came resets them for the next one.
      if ((store.getItem(this.db, item.id)?.attempts ?? 0) > 0)
        this.transition(item.id, { attempts: 0, error: null });
    }
    // Collected `partial`: what is listed is exported with a note naming the shots still owed;
    // the next runs ask the same job for them (`enqueue`, `takePartialPoll`), never pay again.
    const latest = store.getItem(this.db, item.id);
    const missing = latest ? resultsMissing(latest) : 0;
    if (latest && missing > 0 && !PARTIAL_GIVEN_UP.test(latest.note ?? ''))
      this.transition(item.id, { note: partialExportNote(latest, missing) });
    // The rest came (a later poll or a fresh-URL one): the note no longer says part is missing.
    const lateNote =
      missing > 0
        ? latest?.note
        : latest?.note
            ?.replace(PARTIAL_NOTE, 'results listed late, all collected')
            .replace(/^partial: .*$/, 'results listed late, all collected');
    if (latest && lateNote !== latest.note) this.transition(item.id, { note: lateNote ?? null });
    const batch = store.getBatch(this.db, item.batchId);
    const sharedNote = store.getItem(this.db, item.id)?.note ?? '';
    if (sharedNote.startsWith(UPLOAD_URL_SHARED)) {
      // Its results may show another photo's garment: a person looks (review), nothing is exported
      // unseen; auto-approved (`dropshoot run`), it is held, listed, and a rerun holds it again.
      this.transition(
        item.id,
        batch?.autoApprove === 1
          ? { state: 'failed', error: `${SHARED_UPLOAD_HELD}${sharedNote}` }
          : { state: 'review' },
      );
      return;
    }
    if (batch?.autoApprove === 1) {
      this.db
        .transaction(() => {
          for (const r of store.resultsOf(this.db, item.id))
            if (r.review === 'pending') store.setReview(this.db, r.id, 'approved');
          store.updateItem(this.db, item.id, { state: 'exporting' }, this.now());
        })
        .immediate();
      this.engine.emitItem(item.id);
      const next = store.getItem(this.db, item.id);
      if (next && !this.engine.stopping) await this.exportItem(next);
    } else {
      this.transition(item.id, { state: 'review' });
    }
  }

  /**
   * A paid result file not downloaded now: asked again later, with back-off, while it may still
   * come (a file not readable yet within its window; a dropped connection, a cut body, a 5xx a few
   * times); else the photo is held for the next run, which downloads it from the same job (never
   * paid again), and told so, never as an ordinary failure (review rev15 F3, T1).
   */
  private resultFileTrouble(itemId: string, n: number, err: ResultFileError): void {
    const item = store.getItem(this.db, itemId);
    if (!item) return;
    const now = this.now().getTime();
    // A file not readable yet is bounded by its window, not by the tries that count here.
    const attempts = item.attempts + (err.trouble === 'not-yet' ? 0 : 1);
    const { baseMs, maxMs } = this.engine.options.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    const random = this.engine.options.random ?? Math.random;
    const which = `result ${n + 1} of job ${item.jobId ?? '?'}`;
    let wait: number | null = null;
    if (err.trouble === 'not-yet' && err.askAgainBy !== null) {
      // Half the time since the file was listed (1 s to 15 s): the tries thin out as the file
      // stays away, and the last one falls at the window's end (then a fresh URL is asked for).
      const listedAt = Date.parse(item.resultsListedAt ?? '') || now;
      const step = Math.min(15_000, Math.max(1_000, (now - listedAt) / 2));
      wait = Math.max(250, Math.min(step, err.askAgainBy - now));
    } else if (err.trouble === 'transient' && attempts < DOWNLOAD_ATTEMPTS)
      wait = backoffMs(attempts, baseMs, maxMs, random);
    if (wait !== null) {
      const until = new Date(now + wait).toISOString();
      this.transition(itemId, {
        attempts,
        waitReason:
          err.trouble === 'transient' && /^could not download/.test(err.message)
            ? 'offline'
            : 'service_error',
        waitUntil: until,
        error: `${which} not downloaded yet${err.trouble === 'transient' ? ` (try ${attempts} of ${DOWNLOAD_ATTEMPTS})` : ''}, asking again at ${until}: ${err.message}`,
      });
      return;
    }
    const tries = err.trouble === 'transient' ? `failed ${attempts} times` : 'refused';
    this.transition(itemId, {
      state: 'failed',
      attempts: 0,
      waitReason: null,
      waitUntil: null,
      // A job the service failed and refunded (results listed all the same) is not held as paid.
      error: `${store.isPaid(item) ? RESULTS_HELD : ''}${which} ${tries}: ${err.message}`,
    });
  }

  private async exportItem(item: store.ItemRow): Promise<void> {
    const batch = store.getBatch(this.db, item.batchId);
    const results = store.resultsOf(this.db, item.id);
    if (results.some((r) => r.review === 'pending')) {
      // Auto-approved batches approve what they download: results left pending were held for a
      // person (an earlier run's UPLOAD_URL_SHARED), never exported unseen, nor waited on.
      if (batch?.autoApprove === 1) {
        const note = item.note?.startsWith(UPLOAD_URL_SHARED)
          ? item.note
          : 'its results were left for a person to look at (in review; an earlier run may have held them because its upload URL was handed to another photo too): none is exported unseen; look at them in the studio';
        this.transition(item.id, { state: 'failed', error: `${SHARED_UPLOAD_HELD}${note}` });
        return;
      }
      this.transition(item.id, { state: 'review' });
      return;
    }
    const exported = await exportApproved({
      db: this.db,
      library: this.engine.library,
      item,
      recipe: this.recipeOf(item),
      outputDir: batch?.outputDir ?? path.dirname(item.sourcePath),
      now: this.now(),
      onResult: (row) => this.engine.events.emit('result.changed', store.resultView(row)),
    });
    if (exported > 0 || results.some((r) => r.exportedPath))
      this.transition(item.id, { state: 'exported', error: null });
    else
      this.transition(item.id, {
        state: 'failed',
        error: results.length
          ? 'every result was rejected in review'
          : 'the job delivered no results',
      });
  }

  // ---- errors -------------------------------------------------------------------------------

  /**
   * The spec's 500: failure after the charge, job failed, diamonds refunded. An answer, so the
   * photo is sent again (bounded), under a new key.
   */
  private resubmitAfterRefund(item: store.ItemRow, waitUntil: string, message: string): void {
    if (item.resubmits + 1 > MAX_RESUBMITS) {
      this.transition(item.id, {
        state: 'failed',
        submittedAt: null,
        reserved: 0,
        error: `the service failed ${item.resubmits + 1} times after charging (each refunded): ${message}`,
      });
      return;
    }
    this.transition(item.id, {
      submittedAt: null,
      submitKey: `submit-${item.id}-${randomUUID()}`,
      resubmits: item.resubmits + 1,
      attempts: 0,
      waitReason: 'service_error',
      waitUntil,
      error: `the service failed after charging (refunded), sending again: ${message}`,
    });
  }

  /**
   * The service refused to show paid jobs as often as it is asked: every paid job waiting on the
   * gate is held as paid (the next run or a Retry collects it); one polled now holds itself when
   * refused.
   */
  holdHiddenJobs(): void {
    const state = this.engine.gates.hiddenJobs.state;
    if (!state) return;
    const waiting = store
      .itemsInStates(this.db, ['processing'])
      .filter(
        (i) => !this.engine.polling.has(i.id) && i.error?.startsWith(HIDDEN_JOBS_WAIT) === true,
      );
    for (const i of waiting)
      this.transition(i.id, {
        state: 'failed',
        attempts: 0,
        waitReason: null,
        waitUntil: null,
        pollAt: null,
        error: `${RESULTS_HELD}${hiddenJobsHeld(state)}`,
      });
  }

  handleError(item: store.ItemRow, err: unknown): void {
    // Cancelled while its upload was in flight (nothing sent to charge): the cancel stands.
    if (item.state === 'cancelled') return;
    const now = this.now();
    const message = err instanceof Error ? err.message : String(err);
    const paid = store.isPaid(item);
    if (!(err instanceof ApiError)) {
      // Export folder not writable, disk full...: a paid job stays paid (retry collects it).
      this.transition(item.id, { state: 'failed', error: message, reserved: 0 });
      return;
    }
    const inSubmission = item.state === 'submitting';
    // The refused request resent a key an earlier attempt went out under (maybe charged).
    const resent = this.resent.delete(item.id) && inSubmission;
    const gates = this.engine.gates;
    if ((err.status === 402 || err.status === 403) && item.state === 'processing' && item.jobId) {
      // A poll of a paid job refused 402 or 403 (a plan in billing_issue, paused or expired gating
      // every call; the spec names 402 for creates only): a poll costs nothing and its job stays
      // paid, so the submission's fields stand and no diamonds gate closes. Two jobs refused
      // make it the account's: one gate (hidden-jobs.ts), the engine asking one job at a time.
      // A 403 failed the paid photo at once, with no word that it was paid (review rev27 D4).
      if (gates.hiddenJobs.refused(err, item.id, now.getTime()) === 'gate') {
        this.transition(item.id, {
          waitReason: 'service_error',
          waitUntil: null,
          error: hiddenJobsWait(gates.hiddenJobs.state!),
        });
        return;
      }
      // This job alone refused so far: asked again with back-off, then held for the next run.
      const attempts = item.attempts + 1;
      const { baseMs, maxMs } = this.engine.options.backoff ?? { baseMs: 1000, maxMs: 60_000 };
      const random = this.engine.options.random ?? Math.random;
      const pollAt = new Date(now.getTime() + backoffMs(attempts, baseMs, maxMs, random));
      if (attempts < (this.engine.options.maxAttempts ?? 12)) {
        this.transition(item.id, {
          attempts,
          waitReason: 'service_error',
          waitUntil: pollAt.toISOString(),
          pollAt: pollAt.toISOString(),
          error: `the service refused to show the paid job (${err.status}: ${message}); a poll costs nothing: asking again`,
        });
        return;
      }
      this.transition(item.id, {
        state: 'failed',
        attempts: 0,
        waitReason: null,
        waitUntil: null,
        pollAt: null,
        error: `${RESULTS_HELD}the service refused to show the paid job ${attempts} times (${err.status}: ${message})`,
      });
      return;
    }
    if (err.status === 402) {
      const quote = this.engine.quoteOf(item);
      gates.shortOfDiamonds(
        err,
        quote?.diamonds ?? 1,
        now,
        this.engine.spending.lastAccountRead?.balance ?? null,
      );
      const required = parseInsufficient(err.message).required;
      if (required !== null) this.engine.learnFrom402(item, required);
      // Nothing was charged by this request: it is made again when diamonds arrive. A first
      // attempt goes under a new key (a service that keeps answers per key would replay this
      // 402); a resend keeps its key and its mark, since the attempt before it may have been
      // charged (its stored answer then comes back to that key, not a second charge). A new key
      // for it is never safe, so after a few 402s to the resend (a stored 402 replayed for ever,
      // or diamonds still short) it is left to a person rather than waited on again.
      const refused402 = Number(RESENT_402_TIMES.exec(item.note ?? '')?.[1] ?? 0) + 1;
      if (resent && refused402 >= MAX_RESENT_402) {
        this.markUncertain(
          item,
          `the submission was sent again after its answer was lost and refused 402 ${refused402} times under its Idempotency-Key (${err.message})`,
        );
        return;
      }
      const again = resent
        ? {}
        : {
            submittedAt: null,
            ...(inSubmission ? { submitKey: `submit-${item.id}-${randomUUID()}` } : {}),
          };
      this.transition(item.id, {
        ...again,
        waitReason: 'no_diamonds',
        error: `short of diamonds: ${err.message}`,
        ...(resent ? { note: RESENT_402_NOTE(refused402) } : {}),
      });
      this.engine.setFolderWait(item, 'no_diamonds');
      return;
    }
    // A first submission refused 409/503 for the jobs at once: nothing was charged, so it waits
    // like a concurrency 429 (same key, not failed). A resend's 409 keeps its own handling below.
    const jobsAtOnce =
      inSubmission &&
      !resent &&
      (err.status === 409 || err.status === 503) &&
      namesJobsAtOnce(err.message);
    if (err.status === 429 || jobsAtOnce) {
      // A 429 is refused before any work: nothing was submitted or charged.
      const limit = gates.tooManyRequests(
        err,
        now,
        inSubmission && err.status === 429 ? { jobsInFlight: this.jobsInFlight() } : undefined,
      );
      // A resent key stays marked as maybe charged.
      const sent = inSubmission && !resent ? { submittedAt: null } : {};
      if (limit.kind === 'rate_limit' && limit.createsOnly) {
        this.holdForCreates(item.id, limit.until, err.message, sent);
        return;
      }
      if (limit.kind === 'daily_cap') {
        this.engine.spending.learnCap(err.message);
        this.transition(item.id, { ...sent, waitReason: 'daily_cap', error: err.message });
        this.engine.setFolderWait(item, 'daily_cap');
      } else {
        const until = new Date(limit.until).toISOString();
        this.transition(item.id, {
          ...sent,
          waitReason: 'service_error',
          waitUntil: until,
          error: jobsAtOnce
            ? `the service's limit on jobs at once (${err.status}: ${message}): trying again at ${until}`
            : `rate limited by the service: trying again at ${until}`,
        });
      }
      return;
    }
    const { baseMs, maxMs } = this.engine.options.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    const attempts = item.attempts + 1;
    const wait = backoffMs(attempts, baseMs, maxMs, this.engine.options.random ?? Math.random);
    const waitUntil = new Date(now.getTime() + wait).toISOString();
    if (
      err.status === 401 &&
      item.state === 'processing' &&
      item.jobId &&
      attempts < UNAUTHORIZED_POLLS_TO_REVOKED
    ) {
      // A paid job's poll refused 401: a key store's hiccup is asked again (backing off) before
      // the key is taken as revoked and the paid photo failed for the run; a key revoked for
      // good is refused every time, so the run still ends within a few seconds.
      this.transition(item.id, {
        attempts,
        waitReason: 'service_error',
        waitUntil,
        pollAt: waitUntil,
        error: `${message} (asking again before taking the key as revoked)`,
      });
      return;
    }
    if (inSubmission) {
      // The client tells a request that never left (refused, unresolved, TLS) from an answer lost
      // after it went out (timeout, reset): only the first is safe to send again as it is.
      const lostAnswer = (err.status === 0 && !err.notSent) || err.status >= 502;
      const neverSent = err.status === 0 && err.notSent;
      // A 409 refusing the key's reuse (not saying it is still in progress): the service keeps
      // the key and will not replay its answer. After its 500 (the spec's failure after the
      // charge, refunded) that answer is known: sent again under a new key, as after repeated
      // 500s. Waited on as "in progress", each photo spent ~20 creates and ended uncertain
      // (review rev30 D1); after a lost answer it is uncertain at once (below).
      // A ready shoot's 500 (the spec names none for catalog jobs, nor a refund) is not one.
      const generation = !isReadyShootRecipe(this.recipeOf(item).request);
      const keyReuseRefused =
        resent &&
        err.status === 409 &&
        /idempot|key/i.test(message) &&
        !KEY_IN_PROGRESS.test(message);
      if (keyReuseRefused && SAME_KEY_500.test(item.error ?? '') && generation) {
        this.resubmitAfterRefund(item, waitUntil, message);
        return;
      }
      if (resent && err.status === 409 && !keyReuseRefused && attempts <= MAX_IN_FLIGHT_WAITS) {
        // The IETF Idempotency-Key draft's 409: the first attempt under this key is still being
        // processed (maybe charged). Its answer comes to the same key, asked again later.
        this.transition(item.id, {
          attempts,
          waitReason: 'service_error',
          waitUntil,
          error: `the first attempt under this Idempotency-Key is still being processed; asking again: ${message}`,
        });
        return;
      }
      if (resent && err.status >= 400 && err.status < 500) {
        // A refusal of the resent request says nothing of the first attempt: maybe charged.
        this.markUncertain(
          item,
          `the submission was sent again after its answer was lost and refused (${err.status}: ${message})`,
        );
        return;
      }
      if (err.status === 400 && item.uploadKey === firstUploadKey(item.id)) {
        // An upload URL may expire while the photo waits (a rate limit, the daily cap overnight).
        // A 400 comes before any charge: the photo is uploaded once more and sent under a new key.
        this.transition(item.id, {
          state: 'uploading',
          uploadKey: `${firstUploadKey(item.id)}-again`,
          uploadUrl: null,
          submitKey: null,
          submitRequest: null,
          submittedAt: null,
          attempts: 0,
          error: `refused before any charge (${message}); uploading the photo again in case its upload URL expired`,
        });
        return;
      }
      const same500 = Number(SAME_KEY_500.exec(item.error ?? '')?.[1] ?? 0) + 1;
      // Charged, then refunded (spec 4.6), at no set time: its refund is looked for as a failed
      // job's, its room kept under a ceiling until a reading shows it (Budget.failedCreates).
      if (err.status === 500 && generation)
        this.engine.spending.createFailedAfterCharge(
          item,
          this.engine.quoteOf(item)?.diamonds ?? item.price,
        );
      if (err.status === 500 && generation && same500 < 4) {
        // The same key first, whatever is known of the service's keys: one that keeps answers per
        // key tells what became of the attempt (a 500 from a gateway after the charge gets the
        // stored answer; with a new key it was paid twice), and to one that keeps none the key is
        // any resend. Only a 500 it keeps giving for that key counts towards a new key.
        this.transition(item.id, {
          attempts,
          waitReason: 'service_error',
          waitUntil,
          error: `the service answered 500 (${same500}) under this Idempotency-Key; asking again: ${message}`,
        });
        return;
      }
      if (err.status === 500 && generation) {
        this.resubmitAfterRefund(item, waitUntil, message);
        return;
      }
      if (neverSent) {
        // Nothing reached the service: not uncertain, simply sent again (same key) once it is back;
        // a resend that never left still follows an attempt that may have been charged.
        this.transition(item.id, {
          ...(resent ? {} : { submittedAt: null }),
          attempts,
          waitReason: 'offline',
          waitUntil,
          error: message,
        });
        return;
      }
      if (lostAnswer || err.status === 500) {
        // A catalog-jobs 500 (the spec names none, nor a refund) may follow the charge: like a
        // lost answer, sent again only once a probe shows the service holds the key (submit).
        if (attempts < (this.engine.options.maxAttempts ?? 12)) {
          // Sent again under the same key only once a probe shows the service holds it (submit).
          // A 503 (a gateway's, after the service may have charged: review rev19 G1) is probed
          // once the wait it asked for is over, like any lost answer, even on a service a probe
          // showed keeps keys: it may have stopped, or its record of the key expired during the
          // wait, and the resend would be charged anew (review rev21 A, B).
          this.transition(item.id, {
            attempts,
            waitReason: err.status === 0 ? 'offline' : 'service_error',
            waitUntil: err.status === 503 ? this.unavailableUntil(err, now, waitUntil) : waitUntil,
            error: err.status === 503 ? `${CREATE_503_NOTE}: ${message}` : message,
          });
          return;
        }
        this.markUncertain(
          store.getItem(this.db, item.id) ?? item,
          `the answer to the submission was lost ${attempts} times (${message})`,
        );
        return;
      }
    }
    if (err.retryable) {
      // A paid job is never given up because the service is unreachable for a while.
      if (!paid && attempts >= (this.engine.options.maxAttempts ?? 12) && err.status !== 0) {
        this.transition(item.id, {
          state: 'failed',
          reserved: 0,
          error: `gave up after ${attempts} attempts: ${message}`,
        });
        return;
      }
      const patch: store.ItemPatch = {
        attempts,
        waitReason: err.status === 0 ? 'offline' : 'service_error',
        waitUntil,
        error: message,
      };
      if (item.state === 'processing') patch.pollAt = waitUntil;
      this.transition(item.id, patch);
      return;
    }
    const pollAgainAt =
      err.status === 404 && item.state === 'processing' && item.submittedAt
        ? notFoundPollAtMs(Date.parse(item.submittedAt), now.getTime())
        : null;
    if (pollAgainAt !== null) {
      // Accepted and charged moments ago: the job may not be readable yet; asked again shortly.
      this.transition(item.id, {
        pollAt: new Date(pollAgainAt).toISOString(),
        error: `${message} (submitted moments ago: asking again)`,
      });
      return;
    }
    if (
      err.status === 413 &&
      item.state === 'uploading' &&
      this.engine.options.prepareUpload &&
      !item.uploadKey?.endsWith(SMALLER_UPLOAD)
    ) {
      // An upload refused as too large (nothing charged): the service's limit is below the one
      // planned for. Re-encoded smaller and sent once more, rather than failed for good, every
      // run (review rev27 D2).
      this.transition(item.id, {
        uploadKey: `${firstUploadKey(item.id)}${SMALLER_UPLOAD}`,
        attempts: 0,
        waitReason: 'service_error',
        waitUntil: now.toISOString(),
        error: `refused as too large before any charge (${message}): re-encoding it smaller and uploading once more`,
      });
      return;
    }
    // 400, 404, 413, 415…: this photo or recipe cannot succeed as it is; the batch goes on. A paid
    // job keeps its id: a retry collects it again instead of paying anew.
    this.transition(item.id, {
      state: 'failed',
      error: message,
      reserved: 0,
      ...(inSubmission ? { submittedAt: null } : {}),
    });
  }
}
