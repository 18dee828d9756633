/**
 * The /v1 rules of the spec, transport-free: authentication and the daily cap (gate), then one
 * handler per endpoint returning {status, body}. Jobs advance on a timer (see advance()).
 */
import { createHash } from 'node:crypto';
import {
  FASHION_MODELS,
  POSES,
  READY_SETS,
  readySetById,
  SHOT_PRICE,
  TOOLS,
  toolById,
  VENUES,
} from './catalog';
import { makeResultImage, makeVideoBytes, sniffImage } from './images';
import { DEFAULTS, type ReferenceServiceOptions } from './options';
import { SeededRandom } from './random';
import {
  BadRequest,
  CatalogJobRequestSchema,
  checkGeneration,
  GenerationRequestSchema,
  parseBody,
  productImage,
  TemplateSetCreateSchema,
  type GenerationRequest,
} from './rules';
import { Store, type Job, type LedgerEntry, type Piece } from './state';
import { IdempotencyRecords } from './idempotency';
import { jobsAtOnceRefusal } from './jobs-at-once';
import { pollBody } from './poll-body';
import { fileIdOfPath, ResultLinks } from './result-urls';

export type Reply = {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  delayMs?: number;
  /** A non-JSON answer (a gateway's HTML page); `body` is then unused. */
  raw?: { contentType: string; text: string };
};
export type Caller = { apiKey: string; email: string };
export type Urls = { base: string; results: string };

const SAVEABLE = TOOLS.filter((t) => t.saveable).map((t) => t.id);
const fail = (status: number, error: string, headers?: Record<string, string>): Reply => ({
  status,
  body: { success: false, error },
  ...(headers ? { headers } : {}),
});
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export class ReferenceCore {
  readonly store: Store;
  private readonly rng: SeededRandom;
  private readonly finalizing = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly idempotent = new IdempotencyRecords();
  /** First poll that reported each job final: when the client collected it (not persisted). */
  private readonly collectedAt = new Map<string, number>();
  /** catalogUrlsListedOnce: the files each catalog job's answers have listed. */
  private readonly listedOnce = new Map<string, Set<string>>();
  /** Per account, the first charged create's reply (refusedCreateReplaysFirst). */
  private readonly firstCharged = new Map<string, Reply>();
  /** Accounts already credited by creditOnFirstPoll. */
  private readonly creditedOnPoll = new Set<string>();

  readonly links: ResultLinks;

  constructor(
    public options: ReferenceServiceOptions,
    public urls: Urls,
  ) {
    this.store = new Store(options.statePath, options.seed ?? DEFAULTS.seed);
    this.rng = new SeededRandom(this.store.state.rng);
    this.links = new ResultLinks(
      () => ({ options: this.options, urls: this.urls }),
      options.seed ?? DEFAULTS.seed,
    );
  }

  private get state() {
    return this.store.state;
  }
  private save(): void {
    this.state.rng = this.rng.snapshot;
    this.store.save();
  }
  /** The last id handed out with numericJobIds. */
  private numericIds = 1000;
  private newId(): string {
    if (this.options.numericJobIds) return String(++this.numericIds);
    if (this.options.slashIds) return `jobs/2026/${this.rng.hex(8)}`;
    if (this.options.int64JobIds)
      return String(1_730_000_000_000_000_000n + BigInt(++this.numericIds));
    const style = this.options.idStyle ?? DEFAULTS.idStyle;
    return style === 'opaque'
      ? this.rng.opaque()
      : style === 'long'
        ? this.rng.hex(320)
        : this.rng.uuid();
  }
  /** File ids name files on disk: never 'long' (past the 255-byte file name limit). */
  private newFileId(): string {
    return (this.options.idStyle ?? DEFAULTS.idStyle) === 'uuid'
      ? this.rng.uuid()
      : this.rng.opaque();
  }

  // ---- admin (test harness) ------------------------------------------------------------------

  createAccount(input: { email: string; diamonds: number; dailyCap?: number }): { apiKey: string } {
    if (this.state.accounts[input.email]) throw new Error(`account ${input.email} exists`);
    const now = new Date().toISOString();
    this.state.accounts[input.email] = { email: input.email, balance: 0, createdAt: now };
    const apiKey = `rk-${this.rng.opaque(32)}`;
    this.state.keys[apiKey] = {
      email: input.email,
      dailyCap: input.dailyCap ?? DEFAULTS.defaultDailyCap,
    };
    if (input.diamonds > 0) this.move(input.email, input.diamonds, 'grant');
    this.save();
    return { apiKey };
  }
  grant(email: string, diamonds: number): void {
    this.account(email);
    this.move(email, diamonds, 'grant');
    this.save();
  }
  balance(email: string): number {
    return this.account(email).balance;
  }
  ledger(email: string): LedgerEntry[] {
    return this.state.ledger.filter((e) => e.email === email);
  }
  jobsOf(email: string) {
    return this.state.jobs
      .filter((j) => j.email === email)
      .map((j) => ({
        id: j.id,
        kind: j.kind,
        toolId: j.toolId,
        status: j.status,
        charged: j.charged,
        refunded: j.refunded,
        createdAt: j.createdAt,
        request: j.request,
        /** Results the job produced (catalog: completed shots). */
        results: j.pieces.filter((p) => p.state === 'done').length,
        errorMessage: j.errorMessage,
      }));
  }
  requestsToday(apiKey: string): number {
    const count = this.state.counts[apiKey];
    return count && count.day === utcDay(Date.now()) ? count.n : 0;
  }
  /** Requests counted per UTC day for a key, and those the daily cap refused. */
  requestsByDay(apiKey: string): Record<string, { n: number; refused: number }> {
    return { ...(this.state.history[apiKey] ?? {}) };
  }
  /** Today's count for a key set as if `n` requests had been made earlier today (a harness's "busy morning"). */
  setRequestsToday(apiKey: string, n: number): void {
    if (!this.state.keys[apiKey]) throw new Error('unknown api key');
    const today = utcDay(Date.now());
    this.state.counts[apiKey] = { day: today, n };
    const days = (this.state.history[apiKey] ??= {});
    days[today] = { n, refused: days[today]?.refused ?? 0 };
    this.save();
  }
  setDailyCap(apiKey: string, cap: number): void {
    const key = this.state.keys[apiKey];
    if (!key) throw new Error('unknown api key');
    key.dailyCap = cap;
    this.save();
  }

  private account(email: string) {
    const account = this.state.accounts[email];
    if (!account) throw new Error(`no account ${email}`);
    return account;
  }
  private move(email: string, delta: number, kind: LedgerEntry['kind'], jobId?: string): void {
    this.account(email).balance += delta;
    this.state.ledger.push({
      at: new Date().toISOString(),
      email,
      delta,
      kind,
      ...(jobId ? { jobId } : {}),
    });
  }

  // ---- gate: spec 5 and 8, before any other work --------------------------------------------

  gate(authorization: string | undefined): { caller: Caller } | { reply: Reply } {
    const match = /^Bearer ([^\s]+)$/.exec(authorization ?? '');
    const key = match ? this.state.keys[match[1]!] : undefined;
    if (!match || !key) return { reply: fail(401, 'Missing, malformed or invalid API key') };
    const limit = this.options.rateLimit;
    if (limit && this.rng.chance(limit.probability)) {
      this.save();
      return {
        reply: fail(
          429,
          limit.message ??
            `Too many requests right now; retry after ${limit.retryAfterSeconds} seconds`,
          { 'retry-after': String(limit.retryAfterSeconds) },
        ),
      };
    }
    const today = utcDay(Date.now());
    const count = this.state.counts[match[1]!];
    const used = count && count.day === today ? count.n : 0;
    this.state.counts[match[1]!] = { day: today, n: used + 1 };
    const days = (this.state.history[match[1]!] ??= {});
    const refused = used >= key.dailyCap;
    days[today] = { n: used + 1, refused: (days[today]?.refused ?? 0) + (refused ? 1 : 0) };
    this.save();
    if (refused)
      return {
        reply: fail(
          429,
          this.options.dailyCapMessage ??
            `Daily request cap of ${key.dailyCap} reached for this key; it resets at 00:00 UTC`,
        ),
      };
    return { caller: { apiKey: match[1]!, email: key.email } };
  }

  // ---- endpoints ------------------------------------------------------------------------------

  async handle(
    caller: Caller,
    method: string,
    pathname: string,
    query: URLSearchParams,
    body: Buffer,
    headers: Record<string, string | undefined>,
  ): Promise<Reply> {
    try {
      if (this.options.encodedSlash404 && /%2f/i.test(pathname)) return fail(404, 'Not Found');
      const seg = pathname.split('/').filter(Boolean).map(decodeURIComponent); // ['v1', ...]
      // slashIds: a poll's id may come with its slashes as path separators.
      if (this.options.slashIds && seg[1] === 'generations' && seg.length > 3)
        seg.splice(2, seg.length - 2, seg.slice(2).join('/'));
      const route = `${method} /${seg.slice(0, 2).join('/')}${seg.length > 2 ? '/:id' : ''}`;
      const id = seg[2] ?? '';
      if (seg.length > 3) return fail(404, 'Not found');
      switch (route) {
        case 'GET /v1/models':
          return this.ok({
            models: TOOLS.map((t) => {
              const listed = this.options.listedPrices?.[t.id];
              return {
                id: t.id,
                inputShape: t.inputShape,
                promptMode: t.promptMode,
                ...(listed === null
                  ? {}
                  : { fallbackPriceDiamonds: listed ?? t.fallbackPriceDiamonds }),
              };
            }),
          });
        case 'GET /v1/fashion-models': {
          const gender = query.get('gender');
          if (gender !== null && gender !== 'male' && gender !== 'female')
            return fail(400, 'gender must be male or female');
          const list = FASHION_MODELS.filter((m) => !gender || m.gender === gender);
          return this.ok({
            fashionModels: list
              .slice(0, this.limit(query))
              .map((m) => ({ ...m, imageUrl: `${this.urls.base}/catalog/${m.id}` })),
          });
        }
        case 'GET /v1/venues':
          return this.ok({
            venues: VENUES.slice(0, this.limit(query)).map((v) => ({
              ...v,
              imageUrl: `${this.urls.base}/catalog/${v.id}`,
            })),
          });
        case 'GET /v1/poses': {
          const type = query.get('type');
          if (type !== null && !['ring', 'necklace', 'earring', 'bracelet'].includes(type))
            return fail(400, 'type must be ring, necklace, earring or bracelet');
          return this.ok({
            poses: POSES.filter((p) => p.type === type)
              .slice(0, this.limit(query))
              .map((p) => ({ id: p.id, type: p.type ?? 'default' })),
          });
        }
        case 'POST /v1/uploads':
          return this.upload(caller, body);
        case 'POST /v1/generations':
          return await this.create(caller, headers, body, () =>
            this.createGeneration(caller, this.json(body)),
          );
        case 'GET /v1/generations/:id':
          return this.poll(caller, id);
        case 'POST /v1/template-sets':
          return this.createTemplateSet(caller, this.json(body));
        case 'GET /v1/template-sets':
          return this.ok({
            templateSets: this.state.templateSets
              .filter((t) => t.email === caller.email)
              .map((t) => this.templateEntry(t)),
          });
        case 'DELETE /v1/template-sets/:id': {
          const index = this.state.templateSets.findIndex(
            (t) => t.id === id && t.email === caller.email,
          );
          if (index < 0) return fail(404, `Template set ${id} not found`);
          this.state.templateSets.splice(index, 1);
          this.save();
          return this.ok({ deleted: true });
        }
        case 'GET /v1/account':
          return this.account_(caller);
        case 'GET /v1/ready-template-sets':
          return this.readySets(query);
        case 'GET /v1/ready-template-sets/:id': {
          const set = readySetById(id);
          if (!set) return fail(404, `Ready template set ${id} not found`);
          const entry = this.readySetEntry(set);
          const shape = this.options.readySetShape ?? 'templateSet';
          return this.ok(shape === 'flat' ? entry : { [shape]: entry });
        }
        case 'POST /v1/catalog-jobs':
          return await this.create(caller, headers, body, () =>
            this.createCatalogJob(caller, this.json(body)),
          );
        default:
          return fail(404, `No such endpoint: ${method} ${pathname}`);
      }
    } catch (err) {
      if (err instanceof BadRequest) return fail(err.status, err.message);
      throw err;
    }
  }

  private ok(body: Record<string, unknown>, status = 200): Reply {
    return { status, body: { success: true, ...body } };
  }
  /** int64JobIds: a job's answer with its id (and mediaItemId) as a bare 19-digit JSON number. */
  private withBareIds(reply: Reply): Reply {
    if (!this.options.int64JobIds || reply.raw) return reply;
    const text = JSON.stringify(reply.body).replace(/"(id|mediaItemId)":"(\d{19})"/g, '"$1":$2');
    return { ...reply, raw: { contentType: 'application/json; charset=utf-8', text } };
  }
  private json(body: Buffer): unknown {
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      throw new BadRequest(400, 'Invalid request: the body is not JSON');
    }
  }
  private limit(query: URLSearchParams): number {
    const raw = query.get('limit');
    if (raw === null) return 20;
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 100)
      throw new BadRequest(400, 'limit must be an integer from 1 to 100');
    return Number(raw);
  }

  /**
   * A create: with honourIdempotencyKey the same key replays the stored answer (idempotency.ts); the
   * first `gatewayTimeoutFirstCreates` charged creates reach the client as a gateway's 504 while
   * the backend holds the key's record back for `backendHoldMs`.
   */
  private async create(
    caller: Caller,
    headers: Record<string, string | undefined>,
    body: Buffer,
    make: () => Promise<Reply>,
  ): Promise<Reply> {
    const key = this.options.honourIdempotencyKey ? headers['idempotency-key'] : undefined;
    const slot = key ? `${caller.apiKey}\n${key}` : null;
    const text = body.toString('utf8');
    if (slot && key) {
      const earlier = this.idempotent.earlier(slot, key, text, {
        conflictWhileInFlight: this.options.idempotencyInFlight409 === true,
        ...(this.options.idempotencyKeyTtlMs !== undefined
          ? { ttlMs: this.options.idempotencyKeyTtlMs }
          : {}),
        ...(this.options.idempotencyKeyReuse ? { reuse: this.options.idempotencyKeyReuse } : {}),
      });
      if (earlier) return earlier;
      this.idempotent.begin(slot, text);
    }
    let reply: Reply;
    try {
      reply = await make();
    } catch (err) {
      if (slot) this.idempotent.abandon(slot);
      const first = this.firstCharged.get(caller.email);
      if (this.replaysFirst(headers, err instanceof BadRequest ? err.status : 0) && first)
        return first;
      throw err;
    }
    if (reply.status < 300 && !this.firstCharged.has(caller.email))
      this.firstCharged.set(caller.email, reply);
    const first = this.firstCharged.get(caller.email);
    if (this.replaysFirst(headers, reply.status) && first) {
      if (slot) this.idempotent.abandon(slot);
      return first;
    }
    const timedOut =
      reply.status < 300 &&
      this.state.jobs.length <= (this.options.gatewayTimeoutFirstCreates ?? 0);
    if (slot)
      this.idempotent.settle(
        slot,
        text,
        { status: reply.status, body: reply.body },
        {
          holdMs: timedOut ? (this.options.backendHoldMs ?? 0) : 0,
          keep402: this.options.replay402 === true,
          keepAll: this.options.idempotencyKeyReuse === 'refuseAny409',
        },
      );
    if (!timedOut) return reply;
    return {
      status: 504,
      body: {},
      raw: {
        contentType: 'text/html',
        text: '<html><head><title>504 Gateway Time-out</title></head><body><h1>504 Gateway Time-out</h1></body></html>',
      },
      ...(reply.delayMs ? { delayMs: reply.delayMs } : {}),
    };
  }

  /** refusedCreateReplaysFirst: a keyed create refused for its body gets the first charged reply. */
  private replaysFirst(headers: Record<string, string | undefined>, status: number): boolean {
    return (
      this.options.refusedCreateReplaysFirst === true &&
      headers['idempotency-key'] !== undefined &&
      (status === 400 || status === 404)
    );
  }

  private upload(caller: Caller, body: Buffer): Reply {
    if (body.length > Math.min(this.options.uploadLimitBytes ?? Infinity, DEFAULTS.uploadBytes))
      return fail(413, 'Upload larger than 8 MB');
    const kind = sniffImage(body);
    if (!kind) return fail(415, 'Not a JPEG, PNG or WebP image (judged by the file signature)');
    const delayMs = this.options.uploadDelayMs ?? 0;
    // uploadsByContent: the key is the bytes' hash, so the same bytes answer the same id and url.
    const contentKey = this.options.uploadsByContent
      ? createHash('sha256').update(body).digest('hex').slice(0, 32)
      : null;
    const stored = contentKey ? this.state.uploads[contentKey] : undefined;
    if (contentKey && stored)
      return {
        ...this.ok({ id: contentKey, url: this.fileUrl(stored.fileId, 'upload') }),
        delayMs,
      };
    const id = contentKey ?? this.newId();
    const fileId = contentKey ?? this.newFileId();
    this.store.putFile(fileId, body, kind.mime, kind.ext);
    this.state.uploads[id] = { email: caller.email, fileId, at: Date.now() };
    this.save();
    const url = this.fileUrl(fileId, 'upload');
    const shape = this.options.uploadAnswer;
    return {
      ...this.ok(
        shape === 'fileUrl' ? { id, fileUrl: url } : shape === 'idOnly' ? { id } : { id, url },
      ),
      delayMs,
    };
  }

  fileUrl(fileId: string, role: 'upload' | 'result'): string {
    const ext = this.state.files[fileId]?.ext ?? 'bin';
    if (role === 'result') return this.links.url(fileId, ext);
    return `${this.urls.base}/files/${fileId}.${ext}`;
  }

  /** An own file referenced by any URL form this service hands out (relative too), or null. */
  private ownFileId(url: string): string | null {
    let parsed: URL;
    try {
      parsed = new URL(url, this.urls.base);
    } catch {
      return null;
    }
    const id = fileIdOfPath(parsed.pathname);
    return id && this.state.files[id] ? id : null;
  }

  /** An uploaded file whose URL is past uploadUrlTtlMs. */
  uploadExpired(fileId: string, now = Date.now()): boolean {
    const ttl = this.options.uploadUrlTtlMs;
    if (!ttl) return false;
    const upload = Object.values(this.state.uploads).find((u) => u.fileId === fileId);
    return upload?.at !== undefined && now - upload.at > ttl;
  }

  /** Whether the account made or uploaded this file (downloads under /v1/files/). */
  ownsFile(email: string, fileId: string): boolean {
    return (
      this.state.jobs.some((j) => j.email === email && j.pieces.some((p) => p.fileId === fileId)) ||
      Object.values(this.state.uploads).some((u) => u.email === email && u.fileId === fileId)
    );
  }

  /** Resolves every image value (catalog id, own URL or fetched URL); returns the product photo bytes. */
  private async resolveImages(
    toolId: string,
    images: Record<string, string | string[]>,
  ): Promise<{ productFileId: string | null; productBytes: Buffer | null }> {
    let productBytes: Buffer | null = null;
    let productFileId: string | null = null;
    const product = productImage(images);
    for (const [field, value] of Object.entries(images)) {
      for (const ref of Array.isArray(value) ? value : [value]) {
        if (field === 'fashion_model' && FASHION_MODELS.some((m) => m.id === ref)) continue;
        if (field === 'venue' && VENUES.some((v) => v.id === ref)) continue;
        const own = this.ownFileId(ref);
        if (own && this.uploadExpired(own))
          throw new BadRequest(
            400,
            `${toolId}: required image ${field} could not be resolved (expired upload URL)`,
          );
        let bytes: Buffer | null = own ? this.store.readFile(own) : null;
        if (!bytes) bytes = await fetchImage(ref);
        if (!bytes)
          throw new BadRequest(
            400,
            `${toolId}: missing required image images.${field} (could not be resolved: ${ref.slice(0, 200)})`,
          );
        if (product && field === product.field && ref === product.url && !productBytes) {
          productBytes = bytes;
          productFileId = own;
        }
      }
    }
    return { productFileId, productBytes };
  }

  private storeProduct(resolved: {
    productFileId: string | null;
    productBytes: Buffer | null;
  }): string | null {
    if (resolved.productFileId) return resolved.productFileId;
    if (!resolved.productBytes) return null;
    const kind = sniffImage(resolved.productBytes);
    const fileId = this.newFileId();
    this.store.putFile(
      fileId,
      resolved.productBytes,
      kind?.mime ?? 'application/octet-stream',
      kind?.ext ?? 'bin',
    );
    return fileId;
  }

  private duration(): number {
    const [lo, hi] = this.options.jobSeconds ?? DEFAULTS.jobSeconds;
    return this.rng.between(lo, hi) * 1000 * (this.options.timeScale ?? DEFAULTS.timeScale);
  }

  private async createGeneration(caller: Caller, raw: unknown): Promise<Reply> {
    const plan = this.options.planStatus;
    if (plan === 'paused' || plan === 'billing_issue' || plan === 'expired')
      return fail(
        402,
        `Subscription payment failed (plan status ${plan}): update your payment method`,
      );
    let request: GenerationRequest = parseBody(GenerationRequestSchema, raw);
    if (request.templateSetId !== undefined) {
      const template = this.state.templateSets.find(
        (t) => t.id === request.templateSetId && t.email === caller.email,
      );
      if (!template) return fail(404, `Template set ${request.templateSetId} not found`);
      if (request.toolId !== undefined && request.toolId !== template.toolId) {
        return fail(
          400,
          `Template set was saved for toolId '${template.toolId}', not '${request.toolId}'`,
        );
      }
      request = {
        ...template.fields,
        ...request,
        toolId: template.toolId,
        images: {
          ...(template.images as Record<string, string | string[]>),
          ...(request.images ?? {}),
        },
      };
    }
    const tool = checkGeneration(request);
    const images = request.images ?? {};
    const resolved = await this.resolveImages(tool.id, images);
    const busy = jobsAtOnceRefusal(this.options, this.state.jobs, caller.email);
    if (busy) return busy;
    const extra = this.options.chargeExtra ?? DEFAULTS.chargeExtra;
    const price = tool.fallbackPriceDiamonds + extra * tool.results;
    const balance = this.account(caller.email).balance;
    if (balance < price)
      return fail(402, `Insufficient diamonds: required ${price}, balance ${balance}`);

    const id = this.newId();
    const finishAt = Date.now() + this.duration();
    const job: Job = {
      id,
      email: caller.email,
      kind: 'generation',
      toolId: tool.id,
      readySetId: null,
      status: 'processing',
      charged: price,
      refunded: 0,
      createdAt: new Date().toISOString(),
      request,
      styling: pick(request, ['pose', 'shotType', 'stylePreset', 'ratio']),
      inputFileId: this.storeProduct(resolved),
      output: tool.video ? 'video' : tool.id === 'remove_background' ? 'png' : 'jpeg',
      fails: this.rng.chance(this.options.failJobs),
      errorMessage: null,
      pieces: Array.from({ length: tool.results }, (_, i) => ({
        id: `result-${i + 1}`,
        finishAt,
        fails: tool.results > 1 && (this.options.failPackOutputs ?? []).includes(i + 1),
        state: 'pending' as const,
        fileId: null,
      })),
    };
    this.state.jobs.push(job);
    this.move(caller.email, -price, 'charge', id);
    this.drainAfterFirstCharge(caller.email);
    const early =
      this.state.jobs.filter((j) => j.kind === 'generation').length <=
      (this.options.fail500AfterChargeFirst ?? 0);
    if (this.rng.chance(this.options.fail500AfterCharge) || early) {
      this.endJob(
        job,
        'The generation could not be started after charging; the diamonds were refunded',
      );
      this.save();
      return {
        ...fail(500, `Generation ${id} failed after the charge; ${price} diamonds refunded`),
        delayMs: this.options.createDelayMs ?? 0,
      };
    }
    this.save();
    if (this.options.createAnswer === 'completedNoId') {
      // A synchronous service: a job due now is made before the answer, which lists its results.
      this.advance();
      await Promise.all([...this.inFlight]);
      const done = this.poll(caller, id);
      if (done.status === 200 && done.body.status === 'completed')
        return {
          ...this.ok({ status: 'completed', resultUrls: done.body.resultUrls }, 200),
          delayMs: this.options.createDelayMs ?? 0,
        };
    }
    return {
      ...this.withBareIds(this.createAnswer(caller, id)),
      delayMs: this.options.createDelayMs ?? 0,
    };
  }

  /** A charged generation create's 2xx answer, in the shape the latitude switches choose. */
  private createAnswer(caller: Caller, chargedId: string): Reply {
    const first = this.state.jobs.find((j) => j.kind === 'generation' && j.email === caller.email);
    const named = this.options.sameJobIdForEveryCreate && first ? first.id : chargedId;
    const id = this.options.numericJobIds ? Number(named) : named;
    const status = this.options.numericJobIds ? 201 : 202;
    switch (this.options.createAnswer ?? 'spec') {
      case 'wrapped':
        return this.ok({ data: { id, status: 'processing' } }, status);
      case 'wrappedNoId':
        return this.ok({ data: { status: 'processing' } }, status);
      case 'noSuccess':
        return { status, body: { id, status: 'processing' } };
      case 'completedNoId':
        return this.ok({ status: 'processing' }, status); // a job not done by its answer
      case 'spec':
        return this.ok({ id, status: 'processing' }, status);
    }
  }

  private async createCatalogJob(caller: Caller, raw: unknown): Promise<Reply> {
    const request = parseBody(CatalogJobRequestSchema, raw);
    if (!request.readyTemplateSetId) return fail(400, 'readyTemplateSetId is required');
    const images = request.images ?? {};
    const product =
      productImage(images) ??
      Object.entries(images)
        .map(([field, v]) => ({ field, url: Array.isArray(v) ? v[0] : v }))
        .find((p) => typeof p.url === 'string');
    if (!product?.url) return fail(400, 'catalog job: missing required image images.garment_photo');
    const set = readySetById(request.readyTemplateSetId);
    if (!set) return fail(404, `Ready template set ${request.readyTemplateSetId} not found`);
    const unknownShots = (request.shotIds ?? []).filter(
      (s) => !set.shots.some((shot) => shot.id === s),
    );
    if (unknownShots.length)
      return fail(400, `Unknown shotIds for ${set.id}: ${unknownShots.join(', ')}`);
    const shots = request.shotIds?.length
      ? set.shots.filter((s) => request.shotIds!.includes(s.id))
      : set.shots;
    const resolved = await this.resolveImages('catalog job', images);
    const busy = jobsAtOnceRefusal(this.options, this.state.jobs, caller.email);
    if (busy) return busy;
    const price = shots.length * (SHOT_PRICE + (this.options.chargeExtra ?? DEFAULTS.chargeExtra));
    const balance = this.account(caller.email).balance;
    if (balance < price)
      return fail(402, `Insufficient diamonds: required ${price}, balance ${balance}`);

    const id = this.newId();
    // A queued job starts its shots once out of the queue.
    const created = Date.now() + (this.options.catalogQueuedMs ?? 0);
    const job: Job = {
      id,
      email: caller.email,
      kind: 'catalog',
      toolId: null,
      readySetId: set.id,
      status: 'processing',
      charged: price,
      refunded: 0,
      createdAt: new Date().toISOString(),
      request,
      styling: {},
      inputFileId: this.storeProduct(
        resolved.productBytes
          ? resolved
          : { productFileId: this.ownFileId(product.url), productBytes: null },
      ),
      output: 'jpeg',
      fails: false,
      errorMessage: null,
      pieces: shots.map((s) => ({
        id: s.id,
        finishAt: created + this.duration(),
        fails:
          this.rng.chance(this.options.failShots) ||
          (this.options.failShotIds ?? []).includes(s.id),
        state: 'pending' as const,
        fileId: null,
      })),
    };
    this.state.jobs.push(job);
    this.move(caller.email, -price, 'charge', id);
    this.drainAfterFirstCharge(caller.email);
    this.save();
    const reply = this.ok({
      mediaItemId: id,
      status: 'pack_processing',
      packTotal: this.options.packTotalFullSet ? set.shots.length : shots.length,
      diamondCost: this.options.catalogDiamondCostPerShot ? price / shots.length : price,
      readyTemplateSetId: set.id,
    });
    return { ...this.withBareIds(reply), delayMs: this.options.createDelayMs ?? 0 };
  }

  /** drainBalanceAfterFirstCreate: the account's own app spends the rest after its first charge. */
  private drainAfterFirstCharge(email: string): void {
    if (!this.options.drainBalanceAfterFirstCreate) return;
    if (this.state.jobs.filter((j) => j.email === email).length !== 1) return;
    const balance = this.account(email).balance;
    if (balance > 0) this.move(email, -balance, 'external');
  }

  /**
   * With resultFilesNotYetMs: when a result file is first served (ms since epoch), counted from
   * when its shot was made (a generation's from its end); null without the option or for a file
   * no job made.
   */
  resultReadableAt(fileId: string): number | null {
    const wait = this.options.resultFilesNotYetMs;
    if (!wait) return null;
    for (const job of this.state.jobs) {
      const piece = job.pieces.find((p) => p.fileId === fileId);
      if (piece)
        return Math.max(piece.finishAt, job.kind === 'generation' ? (job.endedAt ?? 0) : 0) + wait;
    }
    return null;
  }

  private statusOf(job: Job): string {
    const style = this.options.catalogStatus ?? DEFAULTS.catalogStatus;
    if (job.kind !== 'catalog' || style === 'spec') return job.status;
    if (style === 'pack-stays' && job.status === 'completed') return 'pack_processing';
    return `pack_${job.status}`;
  }

  private poll(caller: Caller, id: string): Reply {
    const credit = this.options.creditOnFirstPoll;
    if (credit && !this.creditedOnPoll.has(caller.email)) {
      this.creditedOnPoll.add(caller.email);
      this.move(caller.email, credit, 'external');
      this.save();
    }
    let job = this.state.jobs.find((j) => j.id === id && j.email === caller.email);
    if (!job) return fail(404, `Generation ${id} not found`);
    job = this.otherJobAnswered(job);
    // A lagging read replica: the job is not there yet.
    if (Date.now() - Date.parse(job.createdAt) < (this.options.poll404ForMs ?? 0))
      return fail(404, `Generation ${id} not found`);
    if (job.status !== 'processing' && !this.collectedAt.has(job.id))
      this.collectedAt.set(job.id, Date.now());
    const body = pollBody(job, this.options, this.statusOf(job), (fileId) =>
      this.fileUrl(fileId, 'result'),
    );
    if (this.options.pollAnswerInternalId) {
      body.id = `internal-${job.id}`;
      delete body.mediaItemId;
    }
    if (
      this.options.catalogUrlsListedOnce &&
      job.kind === 'catalog' &&
      Array.isArray(body.resultUrls)
    ) {
      const listed = this.listedOnce.get(job.id) ?? new Set<string>();
      this.listedOnce.set(job.id, listed);
      body.resultUrls = (body.resultUrls as string[]).filter((url) => {
        const file = fileIdOfPath(new URL(url, 'http://ref.invalid').pathname) ?? url;
        if (listed.has(file)) return false;
        listed.add(file);
        return true;
      });
    }
    if (this.options.duplicateResultUrls && Array.isArray(body.resultUrls))
      body.resultUrls = body.resultUrls.flatMap((url: unknown) => [url, url]);
    const shape = this.options.resultShape;
    if (shape && Array.isArray(body.resultUrls) && body.resultUrls.length === 1) {
      const [url] = body.resultUrls as unknown[];
      if (shape === 'string') body.resultUrls = url;
      else Object.assign(body, { resultUrl: url, resultUrls: [] });
    }
    const reply = this.ok(body);
    if (this.options.failedSuccessFalse && job.status === 'failed')
      reply.body = {
        ...reply.body,
        success: false,
        error: body.errorMessage ?? 'Generation failed',
      };
    return this.withBareIds(reply);
  }

  /** Polls answered with another job's body so far (pollOtherJob). */
  private otherJobAnswers = 0;
  /** pollOtherJob: the account's next finished job after `job` (wrapping), while answers are left. */
  private otherJobAnswered(job: Job): Job {
    if (job.status === 'processing' || this.otherJobAnswers >= (this.options.pollOtherJob ?? 0))
      return job;
    const mine = this.state.jobs.filter((j) => j.email === job.email);
    const at = mine.indexOf(job);
    const next = [...mine.slice(at + 1), ...mine.slice(0, at)].find(
      (j) => j.status !== 'processing',
    );
    if (!next) return job;
    this.otherJobAnswers++;
    return next;
  }

  private createTemplateSet(caller: Caller, raw: unknown): Reply {
    const input = parseBody(TemplateSetCreateSchema, raw);
    if (!input.label?.trim()) return fail(400, 'label is required');
    const id = this.newId();
    const createdAt = new Date().toISOString();
    if (input.sourceMediaId !== undefined) {
      const job = this.state.jobs.find(
        (j) => j.id === input.sourceMediaId && j.email === caller.email,
      );
      if (!job) return fail(404, `sourceMediaId ${input.sourceMediaId} not found`);
      if (job.status !== 'completed') return fail(400, `sourceMediaId ${job.id} has not completed`);
      if (!job.toolId || !SAVEABLE.includes(job.toolId))
        return fail(
          400,
          `toolId ${job.toolId ?? '(catalog job)'} cannot be saved as a template set`,
        );
      const req = job.request as GenerationRequest;
      const styling = Object.fromEntries(
        Object.entries(req.images ?? {}).filter(([k]) => k === 'fashion_model' || k === 'venue'),
      );
      this.state.templateSets.push({
        id,
        email: caller.email,
        label: input.label,
        toolId: job.toolId,
        images: styling,
        fields: job.styling,
        coverFileId: job.pieces[0]?.fileId ?? null,
        createdAt,
      });
    } else {
      if (!input.toolId || !SAVEABLE.includes(input.toolId))
        return fail(400, `toolId must be one of the saveable tools: ${SAVEABLE.join(', ')}`);
      const model = input.images?.fashion_model;
      if (typeof model !== 'string' || !model) return fail(400, 'images.fashion_model is required');
      const venue = input.images?.venue;
      this.state.templateSets.push({
        id,
        email: caller.email,
        label: input.label,
        toolId: input.toolId,
        images: { fashion_model: model, ...(typeof venue === 'string' ? { venue } : {}) },
        fields: input.pose ? { pose: input.pose } : {},
        coverFileId: null,
        createdAt,
      });
    }
    this.save();
    return this.ok({ id }, 201);
  }

  private templateEntry(t: State['templateSets'][number]) {
    const asUrl = (v: unknown) =>
      typeof v === 'string' && !/^https?:/.test(v) ? `${this.urls.base}/catalog/${v}` : v;
    return {
      id: t.id,
      label: t.label,
      toolId: t.toolId,
      images: Object.fromEntries(Object.entries(t.images).map(([k, v]) => [k, asUrl(v)])),
      pose: (t.fields.pose as string | undefined) ?? null,
      coverUrl: t.coverFileId
        ? this.fileUrl(t.coverFileId, 'result')
        : `${this.urls.base}/catalog/${String(t.images.fashion_model)}`,
      ...t.fields,
    };
  }

  /** balanceLagMs: the balance without the moves made within the lag; refundLagMs: without the refunds made within it. */
  private laggingBalance(email: string, balance: number): number {
    const lag = this.options.balanceLagMs ?? 0;
    const refundLag = this.options.refundLagMs ?? 0;
    if (lag <= 0 && refundLag <= 0) return balance;
    const now = Date.now();
    return this.state.ledger
      .filter(
        (e) =>
          e.email === email &&
          (e.kind === 'charge' || e.kind === 'refund') &&
          Date.parse(e.at) > now - Math.max(lag, e.kind === 'refund' ? refundLag : 0),
      )
      .reduce((b, e) => b - e.delta, balance);
  }

  private account_(caller: Caller): Reply {
    const account = this.account(caller.email);
    const renews = new Date(account.createdAt);
    renews.setUTCMonth(renews.getUTCMonth() + 1);
    return this.ok({
      email: account.email,
      diamondBalance: this.laggingBalance(account.email, account.balance),
      plan: {
        isPremium: true,
        status: this.options.planStatus ?? 'active',
        planProductId: 'ref-pro-monthly',
        provider: 'reference-billing',
        cancelAtPeriodEnd: false,
        renewsAt: renews.toISOString(),
      },
    });
  }

  private readySetEntry(set: (typeof READY_SETS)[number]) {
    return {
      id: set.id,
      category: set.category,
      shotCount: set.shots.length,
      shots: set.shots,
      coverUrl: `${this.urls.base}/catalog/${set.id}`,
    };
  }

  /** Cursor: opaque base64 of the next index, read from the `cursorParam` query name only. */
  private readySets(query: URLSearchParams): Reply {
    const category = query.get('category');
    const all = READY_SETS.filter((s) => s.active && (!category || s.category === category));
    const rawLimit = query.get('limit');
    const size =
      rawLimit !== null && /^\d+$/.test(rawLimit)
        ? Math.min(Math.max(Number(rawLimit), 1), 50)
        : (this.options.readySetPageSize ?? DEFAULTS.readySetPageSize);
    const cursor = query.get(this.options.cursorParam ?? DEFAULTS.cursorParam);
    let start = 0;
    if (cursor !== null) {
      const decoded = Number(
        Buffer.from(cursor, 'base64url').toString('utf8').replace(/^pos:/, ''),
      );
      if (!Number.isInteger(decoded) || decoded < 0) return fail(400, 'Invalid cursor');
      start = decoded;
    }
    const page = all.slice(start, start + size);
    const next =
      start + size < all.length ? Buffer.from(`pos:${start + size}`).toString('base64url') : null;
    return this.ok({ templateSets: page.map((s) => this.readySetEntry(s)), nextCursor: next });
  }

  // ---- jobs --------------------------------------------------------------------------------

  /** Per job: how long it ran and how long the client took to see it done (for benchmarks). */
  timings(email: string): { id: string; durationMs: number; collectedAfterMs: number | null }[] {
    return this.state.jobs
      .filter(
        (j) => j.email === email && j.status !== 'processing' && typeof j.endedAt === 'number',
      )
      .map((j) => {
        const collected = this.collectedAt.get(j.id);
        return {
          id: j.id,
          durationMs: j.endedAt! - Date.parse(j.createdAt),
          collectedAfterMs: collected === undefined ? null : collected - j.endedAt!,
        };
      });
  }

  private endJob(job: Job, errorMessage: string | null): void {
    job.endedAt = Date.now();
    const allFailed =
      job.pieces.every((p) => p.state === 'failed') || job.fails || errorMessage !== null;
    if (allFailed) {
      for (const p of job.pieces) if (p.state === 'pending') p.state = 'failed';
      job.status = 'failed';
      job.errorMessage =
        errorMessage ??
        (job.kind === 'catalog'
          ? 'Every shot failed; the whole charge was refunded'
          : 'The generation failed: the model could not render this product');
      const kept =
        this.options.failedNotRefunded && job.kind === 'generation' && errorMessage === null;
      if (!kept) {
        job.refunded = job.charged;
        this.move(job.email, job.charged, 'refund', job.id);
      }
    } else if (
      this.options.catalogPartialFailedStatus &&
      job.pieces.some((p) => p.state === 'failed')
    ) {
      // Failed as a whole in words, yet the shots made stay charged (nothing refunded).
      const failed = job.pieces.filter((p) => p.state === 'failed').length;
      job.status = 'failed';
      job.errorMessage = `${failed} of ${job.pieces.length} shots failed`;
    } else {
      job.status = 'completed';
    }
  }

  /** Finishes every due piece (results written before the job is reported complete). */
  advance(): void {
    if (this.options.jobsStayProcessing) return;
    const now = Date.now();
    for (const job of this.state.jobs) {
      if (job.status !== 'processing' || this.finalizing.has(job.id)) continue;
      const due = job.pieces
        .filter((p) => p.state === 'pending' && p.finishAt <= now)
        .sort((a, b) => a.finishAt - b.finishAt);
      if (!due.length) continue;
      this.finalizing.add(job.id);
      const work = this.finish(job, due).finally(() => {
        this.finalizing.delete(job.id);
        this.inFlight.delete(work);
      });
      this.inFlight.add(work);
    }
  }

  private async finish(job: Job, due: Piece[]): Promise<void> {
    if (job.kind === 'generation' && job.fails && !this.options.failedWithResults) {
      this.endJob(job, null);
      this.save();
      return;
    }
    const input = job.inputFileId ? this.store.readFile(job.inputFileId) : null;
    const tiff = this.options.tiffResults === true && job.output !== 'video';
    for (const piece of due) {
      if (piece.fails) {
        piece.state = 'failed';
        continue;
      }
      const named = `${job.id}-${job.pieces.indexOf(piece)}`;
      const fileId =
        this.options.resultFilesNamedAfterJob && /^[A-Za-z0-9-]{1,64}$/.test(job.id)
          ? named
          : this.newFileId();
      const bytes =
        job.output === 'video'
          ? makeVideoBytes(job.id)
          : await makeResultImage(
              input,
              `${job.id}/${piece.id}`,
              job.pieces.indexOf(piece),
              tiff ? 'tiff' : job.output === 'png' ? 'png' : 'jpeg',
            );
      const ext =
        job.output === 'video' ? 'mp4' : tiff ? 'tif' : job.output === 'png' ? 'png' : 'jpg';
      this.store.putFile(
        fileId,
        bytes,
        job.output === 'video' ? 'video/mp4' : tiff ? 'image/tiff' : `image/${job.output}`,
        ext,
      );
      piece.fileId = fileId;
      piece.state = 'done';
    }
    // failedWithResults: the pieces were made, and the job still ends `failed` (job.fails).
    if (job.pieces.every((p) => p.state !== 'pending')) this.endJob(job, null);
    this.save();
  }

  async drain(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }
}

type State = Store['state'];

function pick(request: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(
    fields.filter((f) => request[f] !== undefined).map((f) => [f, request[f]]),
  );
}

async function fetchImage(url: string): Promise<Buffer | null> {
  if (!/^https?:\/\//i.test(url)) return null;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return null;
    const bytes = Buffer.from(await response.arrayBuffer());
    return sniffImage(bytes) ? bytes : null;
  } catch {
    return null;
  }
}
