/** Switches for what a production service may do where the spec is silent or loose. */
import { z } from 'zod';

export const ReferenceServiceOptionsSchema = z.strictObject({
  /** All randomness is seeded (deterministic runs). */
  seed: z.number().int().optional(),
  /** Multiplies job durations (tests use e.g. 0.01). */
  timeScale: z.number().positive().optional(),
  /** Job duration range in seconds before scaling, default [5, 40]. */
  jobSeconds: z.tuple([z.number().nonnegative(), z.number().nonnegative()]).optional(),
  /**
   * Default 'uuid'; never the `prefix_` ids of Dropshoot's own core. 'long': 320 hex characters
   * for jobs, uploads and template sets (ids that carry an encoded token, as some APIs hand out; file names stay short).
   */
  idStyle: z.enum(['uuid', 'opaque', 'long']).optional(),
  /** Unknown extra fields on every body and entry. */
  extraFields: z.boolean().optional(),
  /** Actual charge = fallbackPriceDiamonds + chargeExtra (per image for packs, per shot for catalog jobs). */
  chargeExtra: z.number().int().nonnegative().optional(),
  /**
   * 'pack': catalog jobs poll as 'pack_processing', end 'pack_completed' / 'pack_failed'.
   * 'pack-stays': as 'pack', but a job whose shots are all done keeps answering 'pack_processing'
   * (spec 3.2: the final status of a catalog job is not shown; its counters and URLs are).
   */
  catalogStatus: z.enum(['spec', 'pack', 'pack-stays']).optional(),
  /** Result URLs on a second loopback port, extension-less, served as application/octet-stream. */
  resultsOnOtherHost: z.boolean().optional(),
  /** Probability that POST /v1/generations charges, then answers 500 and refunds (job failed). */
  fail500AfterCharge: z.number().min(0).max(1).optional(),
  /** The first N generations created fail that way whatever the draw (a test that needs one for sure). */
  fail500AfterChargeFirst: z.number().int().nonnegative().optional(),
  /**
   * plan.status in /v1/account (spec 2.9; default 'active'). A plan 'paused', 'billing_issue' or
   * 'expired' refuses every generation create 402 in its own words, whatever the balance (the
   * spec names no status for such a gate; 402 is a create's refusal).
   */
  planStatus: z
    .enum(['active', 'will_expire', 'paused', 'billing_issue', 'expired', 'refunded', 'none'])
    .optional(),
  /**
   * The largest upload taken, in bytes; the rest is answered 413 'Upload larger than 8 MB'. Default
   * 8 MiB; 8000000 reads spec 4.5's "Maximum 8 MB" in decimal units.
   */
  uploadLimitBytes: z.number().int().positive().optional(),
  /** Probability that a job ends 'failed' (refunded) with an errorMessage. */
  failJobs: z.number().min(0).max(1).optional(),
  /**
   * A failed job's poll is answered 200 with `success: false` beside the job's fields and an
   * `error` (spec 1 rule 5 pairs success:false with an error; the spec shows no failed job's body).
   */
  failedSuccessFalse: z.boolean().optional(),
  /**
   * A generation drawn to fail (failJobs) still makes its results and lists them when it ends
   * `failed`, refunded as the spec says (spec 2.3 says resultUrls is empty when failed: a service
   * reporting a late failure after the outputs were written). A catalog job ended `failed` by
   * catalogPartialFailedStatus lists the shots it made too.
   */
  failedWithResults: z.boolean().optional(),
  /**
   * A generation that ends `failed` keeps its charge (spec 3.1 refunds it automatically: a
   * service whose refund never comes). The 500 after a charge is still refunded.
   */
  failedNotRefunded: z.boolean().optional(),
  /** Probability that one catalog shot fails. */
  failShots: z.number().min(0).max(1).optional(),
  /** These shots of every catalog job fail whatever the draw (a test that needs one for sure). */
  failShotIds: z.array(z.string()).optional(),
  /**
   * A catalog job with some shots failed (not all) ends `failed` with `resultUrls: []` (spec 2.3:
   * "Empty array when failed") and its counters, and is not refunded (spec 3.2: partial failures
   * are not refunded per shot). Default: it ends `completed` listing the shots made.
   */
  catalogPartialFailedStatus: z.boolean().optional(),
  /**
   * A job that completed (charged; the spec refunds only `failed`) is answered with this status,
   * one the spec does not name, no results and `errorMessage` (e.g. `expired`: its results purged
   * before it was collected; `cancelled` by the service's own staff). Nothing is refunded.
   */
  completedAnsweredAs: z
    .strictObject({ status: z.string().min(1), errorMessage: z.string().optional() })
    .optional(),
  /** Transient 429 with Retry-After (not the daily cap, not counted). */
  rateLimit: z
    .strictObject({
      probability: z.number().min(0).max(1),
      retryAfterSeconds: z.number().int().nonnegative(),
      /** The 429's error text (default names the Retry-After); wording differs between services. */
      message: z.string().min(1).optional(),
    })
    .optional(),
  /**
   * A limit on jobs at once per account (spec §8: "concurrent jobs: not shown"): a create while
   * `limit` of the account's jobs are processing is refused before any charge, answered `status`
   * (default 429) with `message` (default 'Too many jobs in progress').
   */
  jobsAtOnce: z
    .strictObject({
      limit: z.number().int().positive(),
      status: z.number().int().min(400).max(599).optional(),
      message: z.string().min(1).optional(),
      /** Sent as Retry-After (spec §7/§8 say nothing of it for this limit). */
      retryAfterSeconds: z.number().int().nonnegative().optional(),
      /**
       * Sent verbatim as Retry-After instead (a service's own form: '0', or malformed ones RFC 9110
       * does not allow, such as '-1' or '0.5').
       */
      retryAfterRaw: z.string().min(1).optional(),
    })
    .optional(),
  /** While set, no job leaves 'processing' (a stuck worker); switched off, each finishes when due. */
  jobsStayProcessing: z.boolean().optional(),
  /**
   * Uploads are stored by content (S3 keys by hash): the same bytes get the same {id, url} again,
   * whoever sent them and whenever (spec 2.4/4.5 do not say an upload's id is new each time).
   */
  uploadsByContent: z.boolean().optional(),
  /**
   * The 200 to an upload names its address otherwise than spec 4.5's `url`: 'fileUrl'
   * ({success, id, fileUrl}) or 'idOnly' ({success, id}: no address at all).
   */
  uploadAnswer: z.enum(['fileUrl', 'idOnly']).optional(),
  /** Slow answers to uploads (the file stored first): an upload in flight for this long. */
  uploadDelayMs: z.number().int().nonnegative().optional(),
  /** Slow answers to creates (after the charge is made). */
  createDelayMs: z.number().int().nonnegative().optional(),
  /** Query name of the ready-template-set cursor (default 'after', not 'cursor'). */
  cursorParam: z.string().min(1).optional(),
  readySetPageSize: z.number().int().positive().optional(),
  /** Default false: the spec does not mention Idempotency-Key. */
  honourIdempotencyKey: z.boolean().optional(),
  /** The daily cap's 429 error text (wording differs between services, e.g. 'Quota exceeded'). */
  dailyCapMessage: z.string().min(1).optional(),
  /**
   * Echo the request's Idempotency-Key header in the answer: of uploads only (an upload front
   * that echoes it), or of every write (Stripe echoes it on every request that sent one).
   */
  echoIdempotencyKey: z.enum(['none', 'uploads', 'all']).optional(),
  /**
   * With honourIdempotencyKey: a same-key retry while the first is still being processed gets 409
   * (Stripe's idempotency_key_in_use). Without it, such a retry is processed as a new request.
   */
  idempotencyInFlight409: z.boolean().optional(),
  /** With honourIdempotencyKey: key records are forgotten this long after they are stored (Stripe: 24 h). */
  idempotencyKeyTtlMs: z.number().int().positive().optional(),
  /**
   * With honourIdempotencyKey, a known key sent with another body: 'refuse' (default) answers 422
   * naming the key (IETF Idempotency-Key draft), 'refuse400' answers 400 in Stripe's words
   * (its idempotency_error), 'replay' answers the stored reply (a store keyed by the key alone),
   * 'refuseAny409' refuses any repeat of a key seen, same body too and whatever its first answer
   * (a 500 included), 409 'Idempotency-Key … already used': nothing is ever replayed.
   */
  idempotencyKeyReuse: z.enum(['refuse', 'refuse400', 'replay', 'refuseAny409']).optional(),
  /**
   * A create refused for its body (an unknown tool or ready set: 400/404) that carries an
   * Idempotency-Key is answered with the account's first charged create's reply instead (a
   * response cache keyed on less than the key and body, its first entry kept). Default false.
   */
  refusedCreateReplaysFirst: z.boolean().optional(),
  /** With honourIdempotencyKey: a 402 is stored under the key and replayed too (Stripe stores every result). */
  replay402: z.boolean().optional(),
  /**
   * The first N creates (generations and catalog jobs) charge, then a gateway answers 504
   * text/html (AWS API Gateway's 29 s limit, nginx proxy_read_timeout).
   */
  gatewayTimeoutFirstCreates: z.number().int().nonnegative().optional(),
  /** After such a 504 the backend goes on this long before the key's record is stored (default 0). */
  backendHoldMs: z.number().int().nonnegative().optional(),
  /**
   * A catalog job polls 'pack_queued' with null pack counts this long after creation, and its
   * shots start after it (a queue in front of the workers, like Replicate's 'starting' status).
   */
  catalogQueuedMs: z.number().int().nonnegative().optional(),
  /** A generation polls 'completed' with no resultUrls this long after it ends (results copied to a CDN after the status flips). */
  completedEmptyMs: z.number().int().nonnegative().optional(),
  /**
   * A catalog job lists each shot's URL in the one answer where it shows completed first: later
   * answers, the final one too, leave it out (spec 2.3: resultUrls "fills in as shots complete";
   * the final status of a catalog job is not shown).
   */
  catalogUrlsListedOnce: z.boolean().optional(),
  /**
   * These outputs (1-based) of every multi-output generation (a pack tool) fail; the others are
   * made and the job ends `completed`, charged in full (spec 3.2: partial failures are not
   * refunded per shot).
   */
  failPackOutputs: z.array(z.number().int().positive()).optional(),
  /**
   * A failed output or shot keeps its place in a finished job's `resultUrls` as `null` or `""`
   * (`["u1", null, "u3"]`): the spec types the list as URLs and does not say how one failed output
   * shows. Default: left out.
   */
  failedOutputListedAs: z.enum(['null', 'empty']).optional(),
  /**
   * A generation past `fromShare` of its duration answers `status`, an in-progress word the spec
   * does not name (`finalizing`, `rendering`), with a preview (its input photo) in `resultUrls`
   * when `preview` is set; `completed` comes as usual once it is done.
   */
  runningAnsweredAs: z
    .strictObject({
      status: z.string().min(1),
      fromShare: z.number().min(0).max(1),
      preview: z.boolean().optional(),
    })
    .optional(),
  /**
   * Result bodies trickle (a slow link): sent in `chunks` parts, one every `everyMs`, so a body
   * takes about chunks x everyMs whatever its size; Content-Length sent.
   */
  resultTrickle: z
    .strictObject({
      chunks: z.number().int().positive(),
      everyMs: z.number().int().positive(),
    })
    .optional(),
  /** Catalog polls also carry `shots: [{id, status, imageUrl}]` (a per-item list, as batch APIs often add). */
  catalogShotsField: z.boolean().optional(),
  /** Result URLs are signed with an expiry (exp=, S3/CloudFront presigned URLs); expired ones answer 403 XML. */
  resultUrlTtlMs: z.number().int().positive().optional(),
  /** The first N result downloads answer 503 (a CDN edge warming up). */
  resultFailFirst: z.number().int().nonnegative().optional(),
  /**
   * A result file answers 404 NoSuchKey (S3's XML) until this long after its shot was made: an
   * object store or CDN not yet serving a new object when the job is reported complete (the spec
   * says only that resultUrls "holds the outputs").
   */
  resultFilesNotYetMs: z.number().int().positive().optional(),
  /**
   * How a result file not served yet (resultFilesNotYetMs) is answered: 404 NoSuchKey (default),
   * or 202 {success: true, status: 'processing'} (a file endpoint that says the output is still
   * being written).
   */
  resultFilesNotYetAs: z.enum(['404', '202']).optional(),
  /**
   * Result downloads are cut short: Content-Length names more bytes than are sent, then the
   * connection closes (a proxy or CDN dropping mid-body). A number: the first N downloads; -1: all.
   */
  truncateResultBodies: z.number().int().min(-1).optional(),
  /** Result URLs under /v1/files/ on the service that answer 401 without the caller's Bearer key (OpenAI's file content endpoint). */
  resultUrlsNeedKey: z.boolean().optional(),
  /**
   * With resultUrlsNeedKey: a result file under /v1/files/ answers 302 instead of its bytes: to
   * itself ('self': a redirect loop), to the file on the results host ('otherHost': a CDN), to its
   * name without the extension under /v1, which serves it ('v1Once'), or to itself with a new
   * query each time ('v1Endless': no URL met twice). Each /v1 hop is counted like any call (spec
   * §8 "counts every call"); the spec shows no redirects.
   */
  resultFilesRedirect: z.enum(['self', 'otherHost', 'v1Once', 'v1Endless']).optional(),
  /** resultUrls are paths relative to the service ('/results/<id>'), as APIs built on Rails' *_path helpers give. */
  relativeResultUrls: z.boolean().optional(),
  /**
   * A catalog job's diamondCost names the price of one shot, not the job's charge (spec §4.10
   * names the field, not its meaning).
   */
  catalogDiamondCostPerShot: z.boolean().optional(),
  /** A catalog job for some shotIds reports packTotal = the set's full shot count (only the asked shots are made; a service counting the set, not the request). */
  packTotalFullSet: z.boolean().optional(),
  /** The account is credited this many diamonds at its first poll (the balance is shared with the service's own apps, spec 1). */
  creditOnFirstPoll: z.number().int().positive().optional(),
  /** After an account's first charge its balance drops to 0 (spent in the service's own app). */
  drainBalanceAfterFirstCreate: z.boolean().optional(),
  /** A job answers 404 to polls this long after creation (a lagging read replica, e.g. DynamoDB eventual reads). */
  poll404ForMs: z.number().int().positive().optional(),
  /** An upload's URL works this long (then 403); a create naming an older one gets 400 (presigned upload URLs expire). */
  uploadUrlTtlMs: z.number().int().positive().optional(),
  /**
   * Shape of GET /v1/ready-template-sets/{id}: { templateSet } (default), { readyTemplateSet },
   * or the set's fields at the top level (services differ; the spec shows no example).
   */
  readySetShape: z.enum(['templateSet', 'readyTemplateSet', 'flat']).optional(),
  /** Image results are TIFF bytes (print-oriented studios deliver TIFF). */
  tiffResults: z.boolean().optional(),
  /**
   * The body of a generation create's 2xx answer: 'spec' {success, id, status} (default),
   * 'wrapped' {success, data: {id, status}} (a common envelope), 'noSuccess' {id, status} with no
   * success flag, 'wrappedNoId' {success, data: {status}} (no job id anywhere), 'completedNoId'
   * a synchronous service: a job done by its answer (jobSeconds [0, 0]) is answered {success,
   * status: 'completed', resultUrls} with no id, else {success, status: 'processing'}. Charged as
   * always.
   */
  createAnswer: z.enum(['spec', 'wrapped', 'noSuccess', 'wrappedNoId', 'completedNoId']).optional(),
  /** Job ids are decimal integers, and generation creates answer them as JSON numbers (status 201). */
  numericJobIds: z.boolean().optional(),
  /**
   * Job ids are 19-digit integers past 2^53 (snowflake style), sent as bare JSON numbers as a
   * job's `id` and `mediaItemId` in create and poll answers (spec 2.3 types id as a string).
   */
  int64JobIds: z.boolean().optional(),
  /** Job ids hold slashes, resource-name style (`jobs/2026/3ebe345f`); polls take them either way. */
  slashIds: z.boolean().optional(),
  /** A path holding an encoded slash (`%2F`) answers 404 (Apache's AllowEncodedSlashes Off). */
  encodedSlash404: z.boolean().optional(),
  /** Every generation create after the account's first charges anew but answers the first job's id (a buggy service). */
  sameJobIdForEveryCreate: z.boolean().optional(),
  /**
   * Result files are named after their job's id and place (`/results/1001-0.jpg`; spec 2.3 says
   * only "URLs"): a service whose ids restart lists the very URLs an earlier job of that id did.
   */
  resultFilesNamedAfterJob: z.boolean().optional(),
  /**
   * A finished generation with one result lists it unwrapped: 'string' (`"resultUrls": "<url>"`)
   * or 'singular' (`"resultUrl": "<url>", "resultUrls": []`). Spec 2.3 types resultUrls as a list.
   */
  resultShape: z.enum(['string', 'singular']).optional(),
  /**
   * The first N polls of a finished job answer another finished job's body (the account's next
   * in creation order, its own id in it): a cache or read replica keyed wrongly in front of
   * GET /v1/generations/{id}. A fault, not spec latitude.
   */
  pollOtherJob: z.number().int().nonnegative().optional(),
  /**
   * Polls answer under an id of the service's own (`internal-<id>`, no mediaItemId): a catalog
   * job named by the generation behind it. Spec 2.3 says only that the id is used to poll.
   */
  pollAnswerInternalId: z.boolean().optional(),
  /** Polls list each result URL twice. */
  duplicateResultUrls: z.boolean().optional(),
  /**
   * GET /v1/models lists these prices instead of a tool's fallbackPriceDiamonds (null: the field
   * left out; spec §2.9 calls it approximate); what a create charges is unchanged.
   */
  listedPrices: z.record(z.string(), z.number().int().nonnegative().nullable()).optional(),
  /**
   * GET /v1/account shows the balance as it was this long ago (a cached or lagging read): moves
   * (charges and refunds) newer than this are not in diamondBalance yet (spec §2.9 does not say it is current).
   */
  balanceLagMs: z.number().int().nonnegative().optional(),
  /**
   * A failed job's refund reaches diamondBalance this long after the job failed (spec 3.1: failed
   * jobs are "refunded automatically", no timing given); charges show at once. The ledger records
   * the refund when the job fails.
   */
  refundLagMs: z.number().int().nonnegative().optional(),
  /** Persist all state so a restart keeps it. */
  statePath: z.string().optional(),
});
export type ReferenceServiceOptions = z.infer<typeof ReferenceServiceOptionsSchema>;

export const DEFAULTS = {
  seed: 1,
  timeScale: 1,
  jobSeconds: [5, 40] as [number, number],
  idStyle: 'uuid' as const,
  chargeExtra: 0,
  catalogStatus: 'spec' as const,
  cursorParam: 'after',
  readySetPageSize: 5,
  defaultDailyCap: 500,
  uploadBytes: 8 * 1024 * 1024,
  jsonBytes: 2 * 1024 * 1024,
};
