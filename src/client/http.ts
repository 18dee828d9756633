/**
 * A remote service speaking /v1 (base URL + API key). Thin: one request per call, errors as
 * ApiError with the service's own message; retries and backoff belong to the studio scheduler.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  ApiError,
  UNNAMED_JOB_PREFIX,
  type Download,
  type ServiceClient,
  type WriteOptions,
} from './service-client';
import { fetchDownload } from './download';
import { certainlyNotSent, describeFailure, retryAfterFrom } from './failure';
import { sniffUploadMime } from './media-type';

/**
 * Redirects a result file on the service's own origin may take (a file moved to a CDN takes one,
 * a signed URL behind it another): more, or a loop, is refused for this run.
 */
export const OWN_FILE_REDIRECTS = 3;

/**
 * The spec does not name the request parameter that carries `nextCursor` back (4.10), so a page
 * request sends it under each name in common use at once; services ignore query parameters they
 * do not know. `cursor` pairs with the `nextCursor` field (the usual convention), `nextCursor`
 * echoes the field's own name, `after` is the Relay/GraphQL-style name, `pageToken` Google's
 * (AIP-158). Stripe's `starting_after` is left out: it takes an object id, not an opaque cursor,
 * and a service that validates it would refuse every page. A service that refuses the extra
 * names (400) is asked again with one name at a time, and the name it accepts is kept.
 */
export const CURSOR_PARAMS = ['cursor', 'nextCursor', 'after', 'pageToken'] as const;

/** One page of ready sets as the spec shows it; extra fields pass through, the cursor is normalised. */
const ReadySetsPageSchema = z.looseObject({
  templateSets: z.array(z.looseObject({ id: z.string().min(1) })),
  nextCursor: z
    .union([z.string(), z.number(), z.null()])
    .optional()
    .transform((c) => (c === undefined || c === null || c === '' ? null : String(c))),
});

/**
 * One ready set as GET /v1/ready-template-sets/{id} answers it. The spec shows no body: the set
 * may come under `templateSet` (as the list's entries), `readyTemplateSet`, or at the top level.
 * A shot count left out is the shot list's length; a set with no shot to count is unreadable.
 */
const ReadySetSchema = z
  .looseObject({
    id: z.string().min(1),
    shots: z.array(z.looseObject({ id: z.string().min(1) })),
    shotCount: z.number().int().positive().optional(),
  })
  .transform((set) => ({ ...set, shotCount: set.shotCount ?? set.shots.length }))
  .refine((set) => set.shotCount > 0, { message: 'no shot in the set' });
const ReadySetDetailSchema = z.union([
  z.looseObject({ templateSet: ReadySetSchema }).transform((body) => body.templateSet),
  z.looseObject({ readyTemplateSet: ReadySetSchema }).transform((body) => body.readyTemplateSet),
  ReadySetSchema,
]);

/**
 * Per-shot progress of a catalog job (beyond the spec). Another service may send a `shots` field
 * of its own shape: it is dropped, and the job is read from the spec's fields alone.
 */
const ShotsSchema = z.array(
  z.looseObject({
    shotId: z.string(),
    status: z.string(),
    resultUrls: z.array(z.string()),
  }),
);

/**
 * The id a Location (a 303's, or a charged write's 2xx) names as the resource a write to `path`
 * made (`<path>/<id>`), if any.
 */
function createdAt(response: Response, requested: URL, path: string): string | null {
  const location = response.headers.get('location');
  if (!location) return null;
  try {
    const segments = new URL(location, requested).pathname.split('/');
    const id = decodeURIComponent(segments.pop() ?? '');
    return id && segments.join('/').endsWith(path) ? id : null;
  } catch {
    return null;
  }
}

/**
 * Advice for a redirect of `path` to `location`: the address the service seems to have moved to
 * (the location without the path asked), to give Dropshoot instead. Empty when it cannot tell.
 */
function movedTo(location: string | null, requested: URL, path: string): string {
  if (!location) return '';
  try {
    const target = new URL(location, requested);
    if (!target.pathname.endsWith(path)) return '';
    const base = `${target.origin}${target.pathname.slice(0, -path.length)}`;
    return `; if the service has moved, give its new address (--remote ${base})`;
  } catch {
    return '';
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A body's fields, or, when none of `keys` is at its top level, the fields it wraps under `data`
 * ({success, data: {...}}: a common envelope the spec does not show, review rev12 D4).
 */
const unwrapped =
  (...keys: string[]) =>
  (body: unknown): unknown => {
    if (!isRecord(body) || keys.some((k) => k in body) || !isRecord(body.data)) return body;
    const { data, ...rest } = body;
    return { ...rest, ...data };
  };

/**
 * An integer past 2^53 under an id-like key (`id`, `mediaItemId`, `jobId`, `upload_id`…), in a
 * body's raw text. JSON.parse reads it as a double and drops its last digits: a 64-bit
 * (snowflake-style) job id sent as a bare number, `"id":1730000000000000008`, became
 * 1730000000000000000, refused as "Too big" after the charge, and every paid photo was lost
 * (review rev25 D1). A `"` inside a JSON string is escaped, so the key's closing quote cannot
 * match there; a fraction or exponent is left alone (the lookahead wants the value's end).
 */
const LONG_INTEGER_ID = /("(?:id|[A-Za-z0-9_]*(?:Id|_id|ID))"\s*:\s*)(\d{16,})(?=\s*[,}\]])/g;

/** `text` with each long integer id quoted, so JSON.parse keeps its digits as text. */
function quoteLongIntegerIds(text: string): string {
  return text.replace(LONG_INTEGER_ID, (whole, head: string, digits: string) =>
    Number.isSafeInteger(Number(digits)) ? whole : `${head}"${digits}"`,
  );
}

/**
 * A job id as services hand them out: a string, or a number (read as its decimal text). A number
 * past 2^53 arrives as text (`quoteLongIntegerIds`); one that did not is refused, never rounded.
 */
const JobIdSchema = z
  .union([z.string().trim().min(1), z.number().int().nonnegative()])
  .transform(String);

/**
 * A create's answer naming its job by `jobId`, or under a resource envelope (`generation`, `job`)
 * rather than spec 4.6's `id`: read as that id. Read as a lost answer, the paid job was never
 * collected (review rev27 D1).
 */
const aliasedJobId = (body: unknown): unknown => {
  if (!isRecord(body) || 'id' in body) return body;
  if (body.jobId !== undefined) return { ...body, id: body.jobId };
  for (const envelope of ['generation', 'job']) {
    const inner = body[envelope];
    if (isRecord(inner) && inner.id !== undefined) return { ...body, ...inner };
  }
  return body;
};

/** A generation create's answer: spec 4.6's {id, status}, or the same under `data`. */
const CreatedGenerationSchema = z.preprocess(
  (body) => aliasedJobId(unwrapped('id')(body)),
  z.looseObject({ id: JobIdSchema }),
);

/** A catalog job create's answer: its job as `mediaItemId` (spec 4.10) or `id`, maybe under `data`. */
const CreatedCatalogJobSchema = z.preprocess(
  unwrapped('mediaItemId', 'id'),
  z
    .looseObject({ mediaItemId: JobIdSchema.optional(), id: JobIdSchema.optional() })
    .refine((b) => b.mediaItemId !== undefined || b.id !== undefined, {
      message: 'no job id (mediaItemId or id)',
    })
    .transform((b) => ({ ...b, mediaItemId: b.mediaItemId ?? b.id })),
);

/** A field name that can only name an address (`fileUrl`, `publicUrl`, `location`, `href`…). */
const URL_FIELD = /(url|uri|location|href|link)$/i;

const isHttpUrl = (value: unknown): value is string => {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

/**
 * An upload's answer without `url` (spec 4.5) whose one address field is plain (`fileUrl`,
 * `uploadUrl`, `publicUrl`, `location`): that field is the url. Two or none: no url is guessed.
 */
const urlByAlias = (body: unknown): unknown => {
  if (!isRecord(body) || 'url' in body) return body;
  const aliases = Object.entries(body).filter(([k, v]) => URL_FIELD.test(k) && isHttpUrl(v));
  return aliases.length === 1 ? { ...body, url: aliases[0]![1] } : body;
};

const UploadAnswerSchema = z.preprocess(
  (body) => urlByAlias(unwrapped('url')(body)),
  z.looseObject({
    id: JobIdSchema.optional(),
    url: z
      .string({ error: 'no url, nor one address field such as fileUrl to read it from' })
      .min(1),
  }),
);

/** A result as the spec lists it, a URL, or an object that carries one (`{url}`, review rev14 F2). */
const ResultUrlSchema = z.union([
  z.string().min(1),
  z.looseObject({ url: z.string().min(1) }).transform((result) => result.url),
]);

/**
 * A result's place left empty (`null` or `""`): an output the job failed to make, listed in its
 * place (`["u1", null, "u3"]`), one not copied out yet, or a catalog shot not made yet. Not a URL,
 * yet no garbage either: read as unreadable, it made every poll of a paid job unreadable and none
 * of its outputs was collected (review rev23 N1).
 */
const EmptySlotSchema = z.union([z.null(), z.string().trim().length(0)]);

/** A result list left empty: absent, `null`, `""` or `{}` (a serializer's empty map). */
const isNoList = (urls: unknown): boolean =>
  urls === undefined ||
  EmptySlotSchema.safeParse(urls).success ||
  (isRecord(urls) && Object.keys(urls).length === 0);

/**
 * A poll's answer. A result URL listed twice is one result (review rev12 D11: collected twice, it
 * was exported as two files); order is kept, since a result's place names its file and shot. An
 * empty place (`EmptySlotSchema`) is left out and counted as `emptyPlaces`: failed or not copied
 * out yet, the answer cannot tell (read as failed, outputs a service filled in seconds after
 * `completed` were never collected: review rev24 R2); the poller owes them (`listedOutcome`). A
 * result list holding anything else that is not a URL is unreadable (it was fetched as
 * `[object Object]`). One result sent unwrapped (`"resultUrls": "https://…"`, or `{url}`), or in
 * a singular `resultUrl` while the list is empty or absent, is a list of one: read as no results,
 * the paid job was failed "completed with no results" and never collected (review rev25 D2). A
 * list field that is none of these (a number, an object without a url) is unreadable, never read
 * as "no results".
 */
const PollAnswerSchema = z.preprocess(
  unwrapped('status'),
  z
    .looseObject({
      status: z.string().min(1),
      resultUrls: z.unknown().transform((urls, ctx) => {
        const lone = ResultUrlSchema.safeParse(urls);
        if (lone.success && !EmptySlotSchema.safeParse(urls).success)
          return { urls: [lone.data], emptySlots: 0 };
        if (isNoList(urls)) return { urls: urls === undefined ? undefined : [], emptySlots: 0 };
        if (!Array.isArray(urls)) {
          ctx.addIssue({ code: 'custom', message: 'resultUrls is neither a list nor a URL' });
          return z.NEVER;
        }
        const filled = urls.filter((entry) => !EmptySlotSchema.safeParse(entry).success);
        const read = z.array(ResultUrlSchema).safeParse(filled);
        if (read.success)
          return { urls: [...new Set(read.data)], emptySlots: urls.length - filled.length };
        ctx.addIssue({ code: 'custom', message: 'resultUrls holds entries that are not URLs' });
        return z.NEVER;
      }),
      resultUrl: z.unknown().optional(),
    })
    .transform(({ resultUrls: { urls, emptySlots }, ...job }) => {
      const single = ResultUrlSchema.safeParse(job.resultUrl);
      const listed =
        (urls === undefined || urls.length === 0) &&
        emptySlots === 0 &&
        single.success &&
        !EmptySlotSchema.safeParse(job.resultUrl).success
          ? [single.data]
          : urls;
      return {
        ...job,
        resultUrls: listed,
        ...(emptySlots > 0 ? { emptyPlaces: emptySlots } : {}),
      };
    }),
);

/**
 * A generation create's answer: its job id (`CreatedGenerationSchema`), or, from a synchronous
 * service, the job done with its results listed and no id (status `completed`, every place
 * filled): those results are the paid job's. Read as a lost answer, they were dropped and the
 * photo left uncertain, paid (review rev27 D1).
 */
const CreateGenerationAnswerSchema = z.union([
  CreatedGenerationSchema,
  PollAnswerSchema.refine(
    (job) =>
      job.status.toLowerCase() === 'completed' &&
      (job.resultUrls?.length ?? 0) > 0 &&
      job.emptyPlaces === undefined,
  ).transform((job) => ({ ...job, id: undefined })),
]);

/**
 * A balance: a number of diamonds, or its plain decimal text ("5000"). Text with separators
 * ("5,000", "5.000") is not read: a comma groups thousands in one locale and marks decimals in
 * another (taken as is, every sum of it was NaN: review rev17 B1).
 */
const BalanceSchema = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^\d+(\.\d+)?$/)
      .transform(Number),
  ])
  .pipe(z.number().finite());

/** The account's answer: read on only if it names a balance that is a number of diamonds. */
const AccountAnswerSchema = z.preprocess(
  unwrapped('diamondBalance'),
  z.looseObject({
    diamondBalance: z.unknown().transform((balance, ctx) => {
      const read = BalanceSchema.safeParse(balance);
      if (read.success) return read.data;
      ctx.addIssue({
        code: 'custom',
        message:
          balance === undefined
            ? 'no diamondBalance'
            : `diamondBalance ${JSON.stringify(balance)} is not a number of diamonds`,
      });
      return z.NEVER;
    }),
  }),
);

/** The ids a poll's answer names as its job (`id`, and `mediaItemId` for a catalog job), as text. */
function namedJobIds(answer: Record<string, unknown>): string[] {
  return [answer.id, answer.mediaItemId].flatMap((named) =>
    typeof named === 'string' && named.trim() !== ''
      ? [named.trim()]
      : typeof named === 'number' && Number.isSafeInteger(named)
        ? [String(named)]
        : [],
  );
}

/** A job id in a path: one segment (`/` as `%2F`), or with its slashes kept as path separators. */
const jobPath = (id: string, form: 'encoded' | 'literal'): string =>
  form === 'encoded' ? encodeURIComponent(id) : id.split('/').map(encodeURIComponent).join('/');

/** The same job id, letters in any case (a UUID may come back in the other case). */
const sameJobId = (a: string, b: string): boolean =>
  a === b || a.toLowerCase() === b.trim().toLowerCase();

/**
 * How one endpoint's 2xx answer is read, and what a body it cannot read is called. `settled`: a
 * body it cannot read is the service's answer, not a lost one: asking again meets the same body,
 * and nothing paid hangs on it (an upload), so it is not retryable.
 */
type Answer<T> = {
  schema: z.ZodType<T>;
  unreadable: string;
  settled?: string;
  /**
   * A job's answer (a poll): a 2xx body `schema` reads that names a job is that job's answer even
   * marked `success: false` (a failed job's body, spec 1 rule 5's pairing of success:false with
   * errors applied to it).
   */
  jobBody?: boolean;
};

/**
 * A write (an upload, a create) is waited for this many times the request timeout: a create the
 * service answers late is charged all the same, and one given up on is a paid job whose id may
 * never be learnt (a service keeping no Idempotency-Key: review rev17 S1, 90 s creates).
 */
const WRITE_WAIT = 3;

/** Query parameters by which S3, Google Cloud Storage, Azure and CDNs sign a URL. */
const SIGNATURE_PARAMS = [
  'x-amz-signature',
  'x-goog-signature',
  'signature',
  'sig',
  'x-amz-credential',
];

/** Whether a URL carries its own credentials (a presigned or SAS link). */
function isSignedUrl(url: URL): boolean {
  return [...url.searchParams.keys()].some((key) => SIGNATURE_PARAMS.includes(key.toLowerCase()));
}

/** A one-way fingerprint of an API key: enough to tell keys apart in caches, useless to a reader. */
export function fingerprintKey(apiKey: string): string {
  return createHash('sha256')
    .update(`dropshoot/key-fingerprint/v1\0${apiKey}`)
    .digest('hex')
    .slice(0, 24);
}

export type HttpClientOptions = {
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
  /** The most bytes a download may bring (DOWNLOAD_MAX_BYTES unless given: tests lower it). */
  downloadMaxBytes?: number;
};

export class HttpClient implements ServiceClient {
  readonly origin: string;
  readonly keyFingerprint: string;
  private readonly base: string;
  /** The cursor parameter name learnt from a service that refused the others, if any. */
  private cursorParam: string | null = null;

  constructor(private readonly opts: HttpClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.origin = this.base;
    this.keyFingerprint = fingerprintKey(opts.apiKey);
  }

  private readonly guards = new Set<() => void>();

  /**
   * Runs `guard` before each /v1 request this client sends (one call may send several: a strict
   * service asked with one cursor name at a time); a guard that throws keeps that request from
   * going out, and the call fails with its error. Returns the guard's removal.
   */
  guardRequests(guard: () => void): () => void {
    this.guards.add(guard);
    return () => {
      this.guards.delete(guard);
    };
  }

  private async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    init: {
      query?: Record<string, string | number | undefined>;
      json?: unknown;
      idempotencyKey?: string;
      answer?: Answer<T>;
    } = {},
  ): Promise<T> {
    return (await this.exchange<T>(method, path, init)).body;
  }

  /**
   * A write with an Idempotency-Key: also reports whether the service echoed it. An echo is no
   * proof the key is honoured (the studio learns that by a replay probe, src/studio/idempotency.ts).
   */
  private async write<T>(
    path: string,
    init: {
      json?: unknown;
      raw?: { data: Buffer; mime: string };
      charges?: boolean;
      answer?: Answer<T>;
    },
    options?: WriteOptions,
  ): Promise<T & { idempotencyHonoured: boolean }> {
    const key = options?.idempotencyKey;
    const { body, headers } = await this.exchange<T>('POST', path, {
      ...init,
      ...(key ? { idempotencyKey: key } : {}),
    });
    return {
      ...body,
      idempotencyHonoured: key !== undefined && headers.get('idempotency-key') === key,
    };
  }

  private async exchange<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    init: {
      query?: Record<string, string | number | undefined>;
      json?: unknown;
      raw?: { data: Buffer; mime: string };
      idempotencyKey?: string;
      /** The write may be charged (a create): a redirect of it may follow a charge. */
      charges?: boolean;
      /**
       * How the 2xx body is read. With one, a body that validates is taken without `success: true`
       * (review rev12 D8: a create answered {id, status} was read as a lost answer, its paid job
       * stranded); one that does not is refused. Without one, `success: true` is required.
       */
      answer?: Answer<T>;
    } = {},
  ): Promise<{ body: T; headers: Headers }> {
    for (const guard of this.guards) guard();
    const url = new URL(`${this.base}${path}`);
    for (const [k, v] of Object.entries(init.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.opts.apiKey}`,
      accept: 'application/json',
    };
    if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.raw) {
      headers['content-type'] = init.raw.mime;
      body = new Uint8Array(init.raw.data);
    }
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body,
        // A write's redirect is never followed: fetch would ask the new address with a GET (for
        // 301-303) and, on another origin, without the key, and take that answer as the write's
        // own: a create charged and answered 303 to its job on another origin read as a 401,
        // "refused, nothing charged", and was paid again on every run (rev15 R3).
        redirect: method === 'GET' ? 'follow' : 'manual',
        signal: AbortSignal.timeout(
          (this.opts.timeoutMs ?? 60_000) * (method === 'POST' ? WRITE_WAIT : 1),
        ),
      });
    } catch (err) {
      // No answer: the transport says whether the request certainly never went out.
      const notSent = certainlyNotSent(err);
      const what = notSent
        ? 'could not be reached'
        : `could not be reached (no answer to ${method} ${path}; the request may have arrived)`;
      throw new ApiError(0, `the service at ${this.base} ${what}: ${describeFailure(err)}`, {
        notSent,
        cause: err,
      });
    }
    const retryAfterMs = retryAfterFrom(response.headers);
    const text = await response.text().catch(() => '');
    if (method !== 'GET' && response.status >= 300 && response.status < 400) {
      // 303 See Other to `<path>/<id>`, on any origin, names the resource the write made: its id is
      // the answer (the job is then read from our own origin, with our key).
      const made = response.status === 303 ? createdAt(response, url, path) : null;
      if (made !== null && init.answer) {
        const read = init.answer.schema.safeParse({ id: made });
        if (read.success) return { body: read.data, headers: response.headers };
      }
      const location = response.headers.get('location');
      if (!init.charges)
        // Nothing paid hangs on it (an upload): asking again meets the same redirect, so the
        // request fails at once with where the service now is (review rev17 R1: 12 uploads per
        // photo, no word why, the run stopped at 240 s).
        throw new ApiError(
          response.status,
          `the service answered ${response.status} to ${method} ${path}, redirecting to ${location ?? '(no Location)'}; not followed: a write goes only to the address Dropshoot was given${movedTo(location, url, path)}`,
          { retryAfterMs },
        );
      // Otherwise the service may still have acted on it: read as a lost answer (502), which a
      // create meets with its key probe, never as a refusal.
      throw new ApiError(
        502,
        `the service answered ${response.status} to ${method} ${path}, redirecting to ${location ?? '(no Location)'}; not followed, the request may have been acted on${movedTo(location, url, path)}`,
        { retryAfterMs },
      );
    }
    let parsed: unknown;
    try {
      // A charged write's 2xx may name its job by Location alone, with no body (RFC 9110's 202).
      parsed =
        init.charges && response.ok && text.trim() === ''
          ? {}
          : (JSON.parse(quoteLongIntegerIds(text)) as unknown);
    } catch {
      throw new ApiError(
        response.status >= 400 ? response.status : 502,
        `the service answered ${response.status} with a non-JSON body`,
        { retryAfterMs },
      );
    }
    const fields = isRecord(parsed) ? parsed : {};
    const { success, ...rest } = fields;
    // A failed job polled 200 {success: false, id, status: 'failed', …} is the job's answer: read
    // as a lost one, the refunded job was held as paid and polled until the give-up, every run,
    // and its price reported spent (review rev27 D3). A 2xx success:false naming no job stays an
    // error.
    if (response.ok && success === false && init.answer?.jobBody) {
      const job = init.answer.schema.safeParse(rest);
      if (job.success && isRecord(job.data) && namedJobIds(job.data).length > 0) {
        // Its words may be in `error` alone.
        const { errorMessage, error } = job.data;
        const body =
          errorMessage === undefined && typeof error === 'string'
            ? { ...job.data, errorMessage: error }
            : job.data;
        return { body: body as T, headers: response.headers };
      }
    }
    if (!response.ok || success === false || (success !== true && !init.answer)) {
      throw new ApiError(
        response.ok ? 502 : response.status,
        typeof fields.error === 'string' ? fields.error : `the service answered ${response.status}`,
        { retryAfterMs },
      );
    }
    if (!init.answer) return { body: rest as T, headers: response.headers };
    let read = init.answer.schema.safeParse(rest);
    // A charged write answered 2xx with its job named only by Location (a 202's status monitor,
    // `Location: /v1/generations/<id>`, body {success, status}): the id is the Location's. Read as
    // a lost answer, the paid job was never collected and a resubmit paid again (review rev27 D1).
    if (!read.success && init.charges) {
      const located = createdAt(response, url, path) ?? createdAt(response, url, '/v1/generations');
      if (located !== null) read = init.answer.schema.safeParse({ ...rest, id: located });
    }
    // An answer that cannot be mended by asking again (an upload's without a url): refused as an
    // answer (status 200, not retryable). Read as lost, it was sent 12 times per photo, every run,
    // spending the day's request cap (review rev25 D6).
    if (!read.success && init.answer.settled)
      throw new ApiError(
        200,
        `the service answered ${response.status} to ${method} ${path} ${init.answer.unreadable} (${read.error.issues[0]?.message ?? 'invalid'}): ${text.slice(0, 200)}; ${init.answer.settled}`,
        { retryAfterMs },
      );
    // Read as a lost answer by its caller (status >= 502): for a create, a charge whose job is unknown.
    if (!read.success)
      throw new ApiError(
        502,
        `the service answered ${response.status} to ${method} ${path} ${init.answer.unreadable} (${read.error.issues[0]?.message ?? 'invalid'}): ${text.slice(0, 200)}`,
        { retryAfterMs },
      );
    return { body: read.data, headers: response.headers };
  }

  async listModels() {
    return (
      await this.request<{ models: Awaited<ReturnType<ServiceClient['listModels']>> }>(
        'GET',
        '/v1/models',
      )
    ).models;
  }
  async listFashionModels(query: Parameters<ServiceClient['listFashionModels']>[0] = {}) {
    return (
      await this.request<{
        fashionModels: Awaited<ReturnType<ServiceClient['listFashionModels']>>;
      }>('GET', '/v1/fashion-models', { query })
    ).fashionModels;
  }
  async listVenues(query: Parameters<ServiceClient['listVenues']>[0] = {}) {
    return (
      await this.request<{ venues: Awaited<ReturnType<ServiceClient['listVenues']>> }>(
        'GET',
        '/v1/venues',
        { query },
      )
    ).venues;
  }
  async listPoses(query: Parameters<ServiceClient['listPoses']>[0] = {}) {
    return (
      await this.request<{ poses: Awaited<ReturnType<ServiceClient['listPoses']>> }>(
        'GET',
        '/v1/poses',
        { query },
      )
    ).poses;
  }
  /**
   * Sends the bytes with the type their signature shows (spec 4.5). Bytes that are no JPEG, PNG
   * or WebP are refused here with the 415 the service would give, without spending a request.
   */
  async upload(data: Buffer, options?: WriteOptions) {
    const mime = sniffUploadMime(data);
    if (!mime)
      throw new ApiError(
        415,
        'not sent: the upload is not a JPEG, PNG or WebP image (judged by its file signature)',
      );
    const uploaded = await this.write(
      '/v1/uploads',
      {
        raw: { data, mime },
        answer: {
          schema: UploadAnswerSchema,
          unreadable: 'without an upload url',
          settled:
            'not sent again: the same answer would come (an upload is not charged); the photo cannot be submitted until the service names its url',
        },
      },
      options,
    );
    return uploaded as typeof uploaded & { id: string };
  }
  /**
   * The job id is read from spec 4.6's {id, status} or the same under `data`, a number as its
   * text. A 2xx with none is a charge whose job is unknown: thrown as a lost answer (502), never
   * taken as a job (review rev12 D4: "undefined" was polled and the paid result lost).
   */
  async createGeneration(
    request: Parameters<ServiceClient['createGeneration']>[0],
    options?: WriteOptions,
  ) {
    const created = await this.write(
      '/v1/generations',
      {
        json: request,
        charges: true,
        answer: { schema: CreateGenerationAnswerSchema, unreadable: 'without a job id' },
      },
      options,
    );
    // Done and listed with no id: named by its key (or at random), never polled.
    const id =
      created.id ?? `${UNNAMED_JOB_PREFIX}${options?.idempotencyKey ?? crypto.randomUUID()}`;
    return { ...created, id } as typeof created & { id: string; status: 'processing' };
  }
  async getGeneration(id: string) {
    type Job = Awaited<ReturnType<ServiceClient['getGeneration']>>;
    const { shots, ...job } = (await this.pollJob(id)) as Omit<Job, 'shots'> & {
      shots?: unknown;
    };
    // The ids the answer names, when none is the one polled: whether it is another of our jobs'
    // (a cache keyed wrongly, review rev25 D4) or this job under an internal id of the service's
    // (a catalog job named by its generation) only the caller can tell, from the jobs it holds.
    const named = namedJobIds(job);
    const answeredAs =
      named.length > 0 && !named.some((other) => sameJobId(other, id)) ? { answeredAs: named } : {};
    const known = shots === undefined ? undefined : ShotsSchema.safeParse(shots);
    return { ...(known?.success ? { ...job, shots: known.data } : job), ...answeredAs } as Job;
  }
  /**
   * How this service takes a job id holding `/` (`jobs/2026/3ebe345f`, resource-name style) in a
   * poll's path: 'encoded' (`%2F`, as any id is sent) or 'literal' (each segment encoded, the
   * slashes kept); null until one has answered.
   */
  private slashesInPath: 'encoded' | 'literal' | null = null;

  /**
   * GET /v1/generations/{id}. An id holding `/` goes encoded, and while no form has answered yet,
   * a 404 to it is asked once more with its slashes literal: a front that refuses `%2F` (Apache's
   * AllowEncodedSlashes Off) answered every poll of the paid job 404 and the photo was failed
   * after the not-found grace (review rev25 D5). The form that answers is kept; an answer naming
   * another job is refused by the caller whichever path brought it.
   */
  private async pollJob(id: string): Promise<unknown> {
    const answer = {
      schema: PollAnswerSchema,
      unreadable: 'that cannot be read as a job',
      jobBody: true,
    };
    const ask = (form: 'encoded' | 'literal') =>
      this.request('GET', `/v1/generations/${jobPath(id, form)}`, { answer });
    if (!id.includes('/')) return ask('encoded');
    const form = this.slashesInPath ?? 'encoded';
    try {
      const body = await ask(form);
      this.slashesInPath = form;
      return body;
    } catch (err) {
      if (this.slashesInPath !== null || !(err instanceof ApiError) || err.status !== 404)
        throw err;
      const body = await ask('literal').catch(() => {
        throw err; // the job not readable yet (a lagging replica) reads as the first 404
      });
      // Kept only when the answer is this job's (another path may name another resource).
      const named = isRecord(body) ? namedJobIds(body) : [];
      if (named.length === 0 || named.some((other) => sameJobId(other, id)))
        this.slashesInPath = 'literal';
      return body;
    }
  }
  createTemplateSet(request: Parameters<ServiceClient['createTemplateSet']>[0]) {
    return this.request<{ id: string }>('POST', '/v1/template-sets', { json: request });
  }
  async listTemplateSets() {
    return (
      await this.request<{ templateSets: Awaited<ReturnType<ServiceClient['listTemplateSets']>> }>(
        'GET',
        '/v1/template-sets',
      )
    ).templateSets;
  }
  async deleteTemplateSet(id: string) {
    await this.request('DELETE', `/v1/template-sets/${encodeURIComponent(id)}`);
  }
  async getAccount() {
    const account = await this.request('GET', '/v1/account', {
      answer: { schema: AccountAnswerSchema, unreadable: 'without a diamond balance' },
    });
    return account as Awaited<ReturnType<ServiceClient['getAccount']>>;
  }
  async listReadySets(
    query: Parameters<ServiceClient['listReadySets']>[0] = {},
  ): ReturnType<ServiceClient['listReadySets']> {
    const { cursor, ...rest } = query;
    const page = (names: readonly string[]) =>
      this.request<unknown>('GET', '/v1/ready-template-sets', {
        query: { ...rest, ...Object.fromEntries(names.map((n) => [n, cursor])) },
      });
    let body: unknown;
    if (cursor === undefined) body = await page([]);
    else if (this.cursorParam) body = await page([this.cursorParam]);
    else {
      try {
        body = await page(CURSOR_PARAMS);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 400) throw err;
        body = await this.pageWithOneCursorName(page, err);
      }
    }
    const parsed = ReadySetsPageSchema.safeParse(body);
    if (!parsed.success)
      throw new ApiError(
        502,
        `GET /v1/ready-template-sets answered an unexpected shape: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      );
    return parsed.data as unknown as Awaited<ReturnType<ServiceClient['listReadySets']>>;
  }

  /** A service refused the cursor under several names: ask with one name at a time, keep the one it takes. */
  private async pageWithOneCursorName(
    page: (names: readonly string[]) => Promise<unknown>,
    refusal: ApiError,
  ): Promise<unknown> {
    for (const name of CURSOR_PARAMS) {
      try {
        const body = await page([name]);
        this.cursorParam = name;
        return body;
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 400) throw err;
      }
    }
    throw refusal;
  }
  async getReadySet(id: string) {
    const path = `/v1/ready-template-sets/${encodeURIComponent(id)}`;
    const parsed = ReadySetDetailSchema.safeParse(await this.request<unknown>('GET', path));
    // Waiting cannot mend a body this client cannot read: an answer (status 200), not retryable.
    if (!parsed.success)
      throw new ApiError(
        200,
        `GET ${path} answered a body this studio cannot read (no set with an id and a shot list under templateSet, readyTemplateSet or at the top level): ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      );
    return parsed.data as unknown as Awaited<ReturnType<ServiceClient['getReadySet']>>;
  }
  async createCatalogJob(
    request: Parameters<ServiceClient['createCatalogJob']>[0],
    options?: WriteOptions,
  ) {
    const created = await this.write(
      '/v1/catalog-jobs',
      {
        json: request,
        charges: true,
        answer: { schema: CreatedCatalogJobSchema, unreadable: 'without a job id' },
      },
      options,
    );
    return created as unknown as Awaited<ReturnType<ServiceClient['createCatalogJob']>>;
  }
  /**
   * Results may live on another host (a CDN), where the API key is never sent, or on the service's
   * own origin behind the key, which it is sent to as on every API call (nothing new is exposed, and
   * no refused request is spent first). A relative URL is read against the base URL. The key is
   * dropped on a redirect to another origin (by fetch, or by hand for the own origin's files). A signed URL carries its own credentials, and an
   * object store behind the service's origin refuses a second one ("Only one auth mechanism
   * allowed", review rev14 F1: a paid result never collected): it goes without the key, and a
   * file of the own origin that refuses the key with 400, 401 or 403 is asked once more without it.
   */
  async download(url: string): Promise<Download> {
    const base = new URL(this.base);
    const target = new URL(url, `${this.base}/`);
    const own = target.origin === base.origin;
    // A file under the service's own /v1 is an API request: counted (and capped) as one.
    const guard = (at: URL) => {
      if (
        at.origin === base.origin &&
        at.pathname.startsWith(`${base.pathname.replace(/\/+$/, '')}/v1/`)
      )
        for (const check of this.guards) check();
    };
    // Redirects of a file on the own origin are followed by hand, each hop to its /v1 counted as
    // the service counts it (review rev33 D4: a file redirecting to itself spent 20 uncounted
    // hops a try, the day's 500 in one run). Another host's redirects cost the cap nothing.
    const redirects = own ? { maxHops: OWN_FILE_REDIRECTS, beforeHop: guard } : undefined;
    // The request timeout bounds silence (no bytes), not the whole body (fetchDownload).
    const timeoutMs = this.opts.timeoutMs ?? 60_000;
    const fetchIt = (headers: Record<string, string>) =>
      fetchDownload(
        target.href,
        headers,
        timeoutMs,
        undefined,
        this.opts.downloadMaxBytes,
        redirects,
      );
    guard(target);
    if (!own || isSignedUrl(target)) return fetchIt({});
    try {
      return await fetchIt({ authorization: `Bearer ${this.opts.apiKey}` });
    } catch (error) {
      if (!(error instanceof ApiError) || ![400, 401, 403].includes(error.status)) throw error;
      guard(target);
      return fetchIt({}).catch(() => {
        throw error; // the key's refusal is the better account of why the file is out of reach
      });
    }
  }
  async close(): Promise<void> {}
}
