/**
 * One method per /v1 endpoint: (authorization header, request) -> {status, body}. Every call is
 * authenticated and counted against the key's daily cap before any other work; domain errors
 * become the spec's `{success: false, error}` bodies here and nowhere else in the core.
 */
import type { Store } from './store/types';
import type { Clock } from './clock';
import type { Catalog } from './catalog';
import type { ImageResolver, StoredImage } from './media/resolve';
import { recordBlob, type BlobStore } from './media/blob-store';
import type { JobRunner } from './jobs/runner';
import type { ProviderAdapter } from './providers/types';
import { failAndRefund, isStoreUnavailable } from './jobs/runner';
import { activeKeyById, type AuthenticatedKey } from './keys';
import type { KeyCache } from './key-cache';
import { countRequest } from './request-counter';
import { balanceOf, charge } from './ledger';
import { newId } from './ids';
import {
  BadRequest,
  Conflict,
  FailedAfterCharge,
  InsufficientDiamonds,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  UnsupportedMediaType,
} from './errors';
import { AnsweredElsewhere, forget, replay, remember, type Idempotency } from './idempotency';
import { assertPixelLimit } from './media/image-header';
import { assertQuota, StagedImages } from './media/staged-images';
import { parseOr400 } from './validation';
import { applyTemplate, validateGeneration } from './generation-request';
import { CATALOG_SHOT_PRICE, getTool, isToolId, toolEntries } from './tools';
import { sniffImage } from './media/sniff';
import type { JobRow } from './store/types';
import type { JobInput, StoredUnit } from './jobs/job-input';
import { errorResponse, isCommitOutcomeUnknown, type ServiceResponse } from './error-response';
import { FinishedJobCache } from './finished-jobs';
import { TemplateSets } from './template-sets';
import { catalogFileOf, catalogIdOf, poseOf } from './catalog-refs';
import {
  CatalogJobRequestSchema,
  FashionModelsQuerySchema,
  GenerationRequestSchema,
  IdSchema,
  GENERATION_PARAM_FIELDS,
  LIMITS,
  PosesQuerySchema,
  ReadySetsQuerySchema,
  TemplateSetCreateSchema,
  VenuesQuerySchema,
  type AccountBody,
  type GenerationBody,
  type GenerationParamField,
  type ReadyTemplateSetEntry,
  type ToolId,
} from '../shared/api';

export { errorResponse, type ServiceResponse } from './error-response';
/** Proof that a request was authenticated and counted (see Service.authorize). */
export type Authorized = { readonly authorized: AuthenticatedKey };
/** An Authorization header value, or an already authorized request. */
export type Auth = string | undefined | Authorized;
export type ServiceDeps = {
  store: Store;
  blobs: BlobStore;
  catalog: Catalog;
  resolver: ImageResolver;
  runner: JobRunner;
  /**
   * Starts a job just created (committed): the runner's `enqueue` in one process; in team mode the
   * lease loop's `wake` (this process claims it if it has a free slot, else another process does).
   * Default: `runner.enqueue`.
   */
  schedule?: (jobId: string) => void;
  provider: ProviderAdapter;
  clock: Clock;
  keys: KeyCache;
  /** Bytes of uploaded and fetched images one account may keep; unbounded when absent. */
  storageQuotaBytes?: number;
  log?: (message: string) => void;
};

/**
 * After a creation's transaction lost its database: pauses between lookups of its job (~2.5 s in
 * all), and how long each waits for a creation still holding the account's row.
 */
const LOST_CHARGE_LOOKUP_PAUSES_MS = [250, 750, 1_500];
const LOST_CHARGE_LOCK_WAIT_MS = 1_000;

/** Ids echoed in messages are cut short: a hostile 8 KB id should not come back whole. */
const shown = (id: string) => (id.length > 64 ? `${id.slice(0, 64)}…` : id);
const ok = (body: object, status = 200): ServiceResponse => ({
  status,
  body: { success: true, ...body },
});

export class Service {
  private readonly finishedJobs = new FinishedJobCache(10_000);
  /** Requests with an Idempotency-Key still being answered: duplicates wait for the same answer. */
  private readonly inFlight = new Map<
    string,
    { bodyHash: string; answer: Promise<ServiceResponse> }
  >();
  private readonly templateSets: TemplateSets;

  constructor(private readonly deps: ServiceDeps) {
    this.templateSets = new TemplateSets(deps);
  }

  private now(): Date {
    return this.deps.clock.now();
  }

  /**
   * Authenticates and counts one request against the key's daily cap. Transports call it before
   * reading a body, so a refused request costs no work; endpoint methods accept its result.
   */
  async authorize(authorization: string | undefined): Promise<Authorized> {
    const key = await this.deps.keys.authenticate(authorization);
    await countRequest(this.deps.store, key, this.now());
    return { authorized: key };
  }

  /**
   * For in-process callers that hold a key id instead of the secret (the embedded studio):
   * the key must be active, and the request still counts against its daily cap.
   */
  async authorizeKeyId(keyId: string): Promise<Authorized> {
    const key = await activeKeyById(this.deps.store, keyId);
    await countRequest(this.deps.store, key, this.now());
    return { authorized: key };
  }

  /**
   * Auth, then the daily cap, then (with an Idempotency-Key) the replay, then the endpoint; every
   * error becomes a JSON error body.
   */
  private async call(
    auth: Auth,
    endpoint: (key: AuthenticatedKey) => Promise<ServiceResponse> | ServiceResponse,
    idem?: Idempotency,
  ): Promise<ServiceResponse> {
    try {
      const key =
        typeof auth === 'object' ? auth.authorized : (await this.authorize(auth)).authorized;
      return await (idem ? this.once(key, idem, () => endpoint(key)) : endpoint(key));
    } catch (err) {
      return errorResponse(err, this.deps.log);
    }
  }

  /**
   * The replay comes before any check that spending could change (balance, quota, images): a
   * retry of a request that spent the last diamonds gets its 202, not a 402. A duplicate that
   * arrives while the first is still being answered waits for it and gets the same answer.
   */
  private async once(
    key: AuthenticatedKey,
    idem: Idempotency,
    endpoint: () => Promise<ServiceResponse> | ServiceResponse,
  ): Promise<ServiceResponse> {
    const slot = `${key.accountId}\n${idem.endpoint}\n${idem.key}`;
    const running = this.inFlight.get(slot);
    if (running) {
      if (running.bodyHash !== idem.bodyHash)
        throw new Conflict('This Idempotency-Key was already used with a different request body');
      return running.answer;
    }
    // The slot is taken before the first await: on PostgreSQL the replay's read is a real round
    // trip, and duplicates arriving meanwhile each passed the check, then found the balance spent.
    const answer = this.replayOrAnswer(key, idem, endpoint);
    this.inFlight.set(slot, { bodyHash: idem.bodyHash, answer });
    try {
      return await answer;
    } finally {
      this.inFlight.delete(slot);
    }
  }

  private async replayOrAnswer(
    key: AuthenticatedKey,
    idem: Idempotency,
    endpoint: () => Promise<ServiceResponse> | ServiceResponse,
  ): Promise<ServiceResponse> {
    const prior = await replay(this.deps.store, key.accountId, idem, this.now());
    if (prior) return prior;
    try {
      return await endpoint();
    } catch (err) {
      // A duplicate answered by another process between our replay and our checks (its charge
      // made this one's balance check fail): its answer is this request's answer too.
      const answeredMeanwhile = await replay(this.deps.store, key.accountId, idem, this.now());
      if (answeredMeanwhile) return answeredMeanwhile;
      throw err;
    }
  }

  listModels(auth: Auth): Promise<ServiceResponse> {
    return this.call(auth, () => ok({ models: toolEntries() }));
  }

  listFashionModels(auth: Auth, query: unknown): Promise<ServiceResponse> {
    return this.call(auth, () => {
      const q = parseOr400(FashionModelsQuerySchema, query, 'query');
      const fashionModels = this.deps.catalog.fashionModels
        .filter((m) => !q.gender || m.gender === q.gender)
        .slice(0, q.limit)
        .map((m) => ({
          id: m.id,
          name: m.name,
          gender: m.gender,
          imageUrl: this.deps.resolver.catalogUrl(m.file),
        }));
      return ok({ fashionModels });
    });
  }

  listVenues(auth: Auth, query: unknown): Promise<ServiceResponse> {
    return this.call(auth, () => {
      const q = parseOr400(VenuesQuerySchema, query, 'query');
      const venues = this.deps.catalog.venues.slice(0, q.limit).map((v) => ({
        id: v.id,
        name: v.name,
        category: v.category,
        imageUrl: this.deps.resolver.catalogUrl(v.file),
      }));
      return ok({ venues });
    });
  }

  listPoses(auth: Auth, query: unknown): Promise<ServiceResponse> {
    return this.call(auth, () => {
      const q = parseOr400(PosesQuerySchema, query, 'query');
      const type = q.type ?? 'default';
      const poses = this.deps.catalog.poses
        .filter((p) => p.type === type)
        .slice(0, q.limit)
        .map((p) => ({
          id: p.id,
          name: p.name,
          type: p.type,
          imageUrl: this.deps.resolver.catalogUrl(p.file),
        }));
      return ok({ poses });
    });
  }

  upload(auth: Auth, data: Buffer, idem?: Idempotency): Promise<ServiceResponse> {
    return this.call(
      auth,
      async (key) => {
        if (data.length > LIMITS.uploadBytes)
          throw new PayloadTooLarge(
            `Upload is larger than the 8 MB (${LIMITS.uploadBytes} bytes) limit`,
          );
        const mime = sniffImage(data);
        if (!mime) throw new UnsupportedMediaType();
        assertPixelLimit(data, 'The upload');
        const { store, blobs } = this.deps;
        const sha256 = await blobs.stage(data);
        try {
          return await this.answerOnce(key, idem, (tx) => async () => {
            if (!(await tx.blobs.accountHolds(key.accountId, sha256)))
              await assertQuota(tx, key.accountId, data.length, this.deps.storageQuotaBytes);
            const id = await recordBlob(
              tx,
              { sha256, mime, size: data.length, origin: 'upload', accountId: key.accountId },
              this.now(),
            );
            return ok({ id, url: this.deps.resolver.fileUrl(id) });
          }).then((o) => ('replayed' in o ? o.replayed : o.created));
        } finally {
          await blobs.release(sha256);
        }
      },
      idem,
    );
  }

  createGeneration(auth: Auth, body: unknown, idem?: Idempotency): Promise<ServiceResponse> {
    return this.call(
      auth,
      (key) => this.withStaging((staged) => this.generation(key, body, idem, staged)),
      idem,
    );
  }

  /** Runs `work` with a place for fetched images; whatever its transaction did not record is dropped. */
  private async withStaging(
    work: (staged: StagedImages) => Promise<ServiceResponse>,
  ): Promise<ServiceResponse> {
    const staged = new StagedImages(this.deps.blobs);
    try {
      return await work(staged);
    } finally {
      await staged.release();
    }
  }

  private async generation(
    key: AuthenticatedKey,
    body: unknown,
    idem: Idempotency | undefined,
    staged: StagedImages,
  ): Promise<ServiceResponse> {
    let request = parseOr400(GenerationRequestSchema, body, 'request body');
    let templateSetId: string | null = null;
    if (request.templateSetId) {
      const template = await this.templateSets.forGeneration(key.accountId, request.templateSetId);
      request = applyTemplate(request, template);
      templateSetId = template.id;
    }
    const valid = validateGeneration(request);
    const price = valid.tool.price;
    await this.requireBalance(key.accountId, price);

    const images: Record<string, StoredImage[]> = {};
    for (const [field, refs] of Object.entries(valid.images)) {
      images[field] = [];
      for (const ref of refs)
        images[field].push(await this.deps.resolver.resolve(ref, field, valid.tool.id, staged));
    }
    const unit = this.unit(valid.tool.id, images, valid.request, null);
    const input: JobInput = {
      units: [unit],
      styling: {
        images: Object.fromEntries(
          Object.entries(valid.images)
            .filter(([k]) => k === 'fashion_model' || k === 'venue')
            .map(([k, v]) => [k, v[0]!]),
        ),
        pose: valid.request.pose ?? null,
        shotType: valid.request.shotType ?? null,
        stylePreset: valid.request.stylePreset ?? null,
        ratio: valid.request.ratio ?? null,
      },
    };
    return this.submit(
      key,
      {
        kind: 'generation',
        toolId: valid.tool.id,
        price,
        input,
        templateSetId,
        readySetId: null,
        idem,
        staged,
      },
      (id) => ok({ id, status: 'processing' }, 202),
    );
  }

  getGeneration(auth: Auth, id: string): Promise<ServiceResponse> {
    return this.call(auth, async (key) => {
      const finished = this.finishedJobs.get(id, this.deps.resolver.publicOrigin);
      if (finished) {
        if (finished.accountId !== key.accountId)
          throw new NotFound(`Generation ${shown(id)} not found`);
        return finished.answer;
      }
      const job = IdSchema.safeParse(id).success ? await this.deps.store.jobs.get(id) : undefined;
      if (!job || job.accountId !== key.accountId)
        throw new NotFound(`Generation ${shown(id)} not found`);
      const answer = ok(await this.generationBody(job));
      // Completed and failed jobs never change again; polls of them skip the store.
      if (job.status !== 'processing')
        this.finishedJobs.set(id, {
          accountId: job.accountId,
          origin: this.deps.resolver.publicOrigin,
          answer: { ...answer, json: JSON.stringify(answer.body) },
        });
      return answer;
    });
  }

  createTemplateSet(auth: Auth, body: unknown): Promise<ServiceResponse> {
    return this.call(auth, async (key) =>
      ok(
        {
          id: await this.templateSets.create(
            key.accountId,
            parseOr400(TemplateSetCreateSchema, body, 'request body'),
          ),
        },
        201,
      ),
    );
  }

  listTemplateSets(auth: Auth): Promise<ServiceResponse> {
    return this.call(auth, async (key) =>
      ok({ templateSets: await this.templateSets.list(key.accountId) }),
    );
  }

  deleteTemplateSet(auth: Auth, id: string): Promise<ServiceResponse> {
    return this.call(auth, async (key) => {
      if (!(await this.templateSets.delete(key.accountId, id)))
        throw new NotFound(`Template set ${shown(id)} not found`);
      return ok({});
    });
  }

  getAccount(auth: Auth): Promise<ServiceResponse> {
    return this.call(auth, async (key) => {
      const row = await this.deps.store.accounts.get(key.accountId);
      if (!row) throw new Error(`no account ${key.accountId}`);
      const body: Omit<AccountBody, 'success'> = {
        email: row.email,
        diamondBalance: row.balance,
        plan: {
          isPremium: row.planIsPremium,
          status: row.planStatus,
          planProductId: row.planProductId,
          provider: row.planProvider,
          cancelAtPeriodEnd: row.planCancelAtPeriodEnd,
          renewsAt: row.planRenewsAt ?? nextMonthlyRenewal(row.createdAt, this.now()),
        },
      };
      return ok(body);
    });
  }

  listReadySets(auth: Auth, query: unknown): Promise<ServiceResponse> {
    return this.call(auth, () => {
      const q = parseOr400(ReadySetsQuerySchema, query, 'query');
      let after: string | undefined;
      if (q.cursor !== undefined) {
        after = Buffer.from(q.cursor, 'base64url').toString('utf8');
        if (!/^[a-z0-9_-]{1,128}$/.test(after))
          throw new BadRequest('cursor is not a cursor returned by this endpoint');
      }
      const sets = this.deps.catalog.readySets
        .filter((s) => s.active && (!q.category || s.category === q.category))
        .toSorted((a, b) => (a.id < b.id ? -1 : 1))
        .filter((s) => after === undefined || s.id > after);
      const page = sets.slice(0, q.limit);
      const last = page.at(-1);
      const nextCursor =
        sets.length > q.limit && last ? Buffer.from(last.id).toString('base64url') : null;
      return ok({ templateSets: page.map((s) => this.readySetEntry(s)), nextCursor });
    });
  }

  getReadySet(auth: Auth, id: string): Promise<ServiceResponse> {
    return this.call(auth, () => {
      const set = this.deps.catalog.readySets.find((s) => s.id === id && s.active);
      if (!set) throw new NotFound(`Ready template set ${shown(id)} not found`);
      return ok({ templateSet: this.readySetEntry(set) });
    });
  }

  createCatalogJob(auth: Auth, body: unknown, idem?: Idempotency): Promise<ServiceResponse> {
    return this.call(
      auth,
      (key) => this.withStaging((staged) => this.catalogJob(key, body, idem, staged)),
      idem,
    );
  }

  private async catalogJob(
    key: AuthenticatedKey,
    body: unknown,
    idem: Idempotency | undefined,
    staged: StagedImages,
  ): Promise<ServiceResponse> {
    const req = parseOr400(CatalogJobRequestSchema, body, 'request body');
    if (!req.readyTemplateSetId) throw new BadRequest('readyTemplateSetId is required');
    const productField = (['garment_photo', 'user_photo', 'jewelry_image'] as const).find(
      (f) => req.images?.[f] !== undefined,
    );
    for (const field of Object.keys(req.images ?? {})) {
      if (field !== productField)
        throw new BadRequest(
          `catalog job: image field '${field}' is not accepted (give one product image in garment_photo)`,
        );
    }
    if (!productField) throw new BadRequest("catalog job: missing required image 'garment_photo'");
    const set = this.deps.catalog.readySets.find(
      (s) => s.id === req.readyTemplateSetId && s.active,
    );
    if (!set) throw new NotFound(`Ready template set ${req.readyTemplateSetId} not found`);
    const wanted = req.shotIds ? [...new Set(req.shotIds)] : set.shots.map((s) => s.id);
    const shots = wanted.map((shotId) => {
      const shot = set.shots.find((s) => s.id === shotId);
      if (!shot)
        throw new BadRequest(`shot '${shotId}' is not part of ready template set ${set.id}`);
      return shot;
    });
    const price = CATALOG_SHOT_PRICE * shots.length;
    await this.requireBalance(key.accountId, price);
    const productRef = req.images![productField]!;
    if (Array.isArray(productRef)) throw new BadRequest(`images.${productField} takes one URL`);
    const product = await this.deps.resolver.resolve(
      productRef,
      productField,
      'catalog job',
      staged,
    );
    const units = shots.map((shot, variant) =>
      this.unit(
        'virtual_model',
        {
          garment_photo: [product],
          fashion_model: [catalogFileOf(this.deps.catalog, 'fashion_model', shot.fashionModel)],
          venue: [catalogFileOf(this.deps.catalog, 'venue', shot.venue)],
        },
        {
          pose: shot.pose,
          ratio: req.ratio ?? shot.ratio,
          images: { fashion_model: shot.fashionModel, venue: shot.venue },
        },
        shot.id,
        { variant, modelId: req.modelId },
      ),
    );
    const first = shots[0]!;
    const input: JobInput = {
      units,
      styling: {
        images: { fashion_model: first.fashionModel, venue: first.venue },
        pose: first.pose,
        shotType: null,
        stylePreset: null,
        ratio: req.ratio ?? null,
      },
    };
    return this.submit(
      key,
      {
        kind: 'catalog',
        toolId: 'virtual_model',
        price,
        input,
        templateSetId: null,
        readySetId: set.id,
        idem,
        staged,
      },
      (id) =>
        ok(
          {
            mediaItemId: id,
            status: 'pack_processing',
            packTotal: shots.length,
            diamondCost: price,
            readyTemplateSetId: set.id,
            shotIds: shots.map((s) => s.id),
          },
          202,
        ),
    );
  }

  // ---- helpers -----------------------------------------------------------------------------

  /** Early 402 so a short balance is not spent fetching images; the charge re-checks. */
  private async requireBalance(accountId: string, price: number): Promise<void> {
    const balance = await balanceOf(this.deps.store, accountId);
    if (balance < price) throw new InsufficientDiamonds(price, balance);
  }

  /**
   * Runs `work` in one transaction with the idempotency record: a request another process
   * answered meanwhile (this process's duplicates wait in once()) gets that answer instead, and
   * nothing of `work` is kept.
   */
  private async answerOnce(
    key: AuthenticatedKey,
    idem: Idempotency | undefined,
    work: (tx: Store) => () => Promise<ServiceResponse>,
  ): Promise<{ replayed: ServiceResponse } | { created: ServiceResponse }> {
    const { store } = this.deps;
    for (;;) {
      try {
        return await store.transaction(async (tx) => {
          const prior = idem && (await replay(tx, key.accountId, idem, this.now()));
          if (prior) return { replayed: prior };
          const response = await work(tx)();
          if (idem) await remember(tx, key.accountId, idem, response, this.now());
          return { created: response };
        });
      } catch (err) {
        if (!(err instanceof AnsweredElsewhere)) throw err;
        // Rolled back; the next round finds the other answer and replays it.
      }
    }
  }

  /**
   * Charges and records the job in one transaction (with its fetched images and the idempotency
   * record), lets the provider accept it, then queues it. A provider refusal after the charge is
   * the spec's 500: the job fails, the charge is refunded once, and the Idempotency-Key is freed
   * so a retry with it is a new request rather than a replay of the failed job.
   */
  private async submit(
    key: AuthenticatedKey,
    job: {
      kind: 'generation' | 'catalog';
      toolId: ToolId;
      price: number;
      input: JobInput;
      templateSetId: string | null;
      readySetId: string | null;
      idem: Idempotency | undefined;
      staged: StagedImages;
    },
    respond: (jobId: string) => ServiceResponse,
  ): Promise<ServiceResponse> {
    const { store } = this.deps;
    const jobId = newId('job');
    const charged = this.answerOnce(key, job.idem, (tx) => async () => {
      const now = this.now();
      await job.staged.record(tx, key.accountId, this.deps.storageQuotaBytes, now);
      await tx.jobs.insert(
        {
          id: jobId,
          accountId: key.accountId,
          keyId: key.keyId,
          kind: job.kind,
          toolId: job.toolId,
          price: job.price,
          input: JSON.stringify(job.input),
          templateSetId: job.templateSetId,
          readySetId: job.readySetId,
          createdAt: now.toISOString(),
        },
        job.input.units,
      );
      await charge(tx, key.accountId, jobId, job.price, now);
      return respond(jobId);
    });
    const outcome = await charged.catch(async (err: unknown) => {
      if (!isStoreUnavailable(err)) throw err;
      return { created: await this.afterLostCharge(key.accountId, jobId, err, respond) };
    });
    if ('replayed' in outcome) return outcome.replayed;

    if (this.deps.provider.start) {
      try {
        for (const unit of job.input.units)
          await this.deps.provider.start(this.deps.runner.providerJob(jobId, unit));
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        const refunded = await failAndRefund(
          store,
          jobId,
          `the generation could not start: ${reason}`,
          this.now(),
          async (tx) => {
            if (job.idem) await forget(tx, key.accountId, job.idem);
          },
        );
        throw new FailedAfterCharge(
          `Generation ${jobId} failed after the charge (${reason}); ${refunded} diamonds were refunded`,
        );
      }
    }
    if (this.deps.schedule) this.deps.schedule(jobId);
    else this.deps.runner.enqueue(jobId);
    return outcome.created;
  }

  /**
   * The charge transaction lost its database. Lost on COMMIT, it may have landed (only the answer
   * was lost), so the job's pre-made id is looked up on a fresh connection for a few seconds:
   * there, the creation stands and gets its 202 (a retry would pay twice); not there, nothing was
   * charged; the database still away, a 503 that names the job to look up and promises nothing.
   */
  private async afterLostCharge(
    accountId: string,
    jobId: string,
    lost: unknown,
    respond: (jobId: string) => ServiceResponse,
  ): Promise<ServiceResponse> {
    const log = this.deps.log ?? (() => undefined);
    const reason = lost instanceof Error ? lost.message : String(lost);
    let landed: boolean | undefined;
    for (const pause of [...LOST_CHARGE_LOOKUP_PAUSES_MS, undefined]) {
      try {
        landed = await this.deps.store.jobs.landed(jobId, accountId, LOST_CHARGE_LOCK_WAIT_MS);
        break;
      } catch (err) {
        if (pause === undefined) break;
        log(
          `job ${jobId}: looking up a creation whose transaction lost its database failed (${err instanceof Error ? err.message : String(err)}); trying again`,
        );
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
    if (landed === true) {
      log(
        `job ${jobId}: the database connection was lost on the creation's COMMIT (${reason}), and the job is there: it stands`,
      );
      return respond(jobId);
    }
    const sureRollback = landed === false || !isCommitOutcomeUnknown(lost);
    log(
      `job ${jobId}: the creation's transaction lost its database (${reason}); ${sureRollback ? 'it was rolled back' : 'whether it committed is not known'}`,
    );
    if (sureRollback)
      throw new ServiceUnavailable(
        'The service lost its database while creating the job; it was not created and nothing was charged. Try again.',
      );
    throw new ServiceUnavailable(
      `The service lost its database while charging job ${jobId} and cannot tell yet whether the charge landed. Look it up before creating it again: GET /v1/generations/${jobId} answers 404 if it was not created.`,
    );
  }

  private unit(
    toolId: ToolId,
    images: Record<string, StoredImage[]>,
    request: { pose?: string; images?: unknown } & Partial<
      Record<Exclude<GenerationParamField, 'pose'>, string | number>
    >,
    shotId: string | null,
    extra: { variant?: number; modelId?: string | undefined } = {},
  ): StoredUnit {
    const { fashion_model, venue, ...rest } = images;
    const modelRef = (request.images as Record<string, unknown> | undefined)?.fashion_model;
    const venueRef = (request.images as Record<string, unknown> | undefined)?.venue;
    const tool = getTool(toolId);
    const params: StoredUnit['params'] = {};
    for (const field of GENERATION_PARAM_FIELDS) {
      if (field !== 'pose' && request[field] !== undefined)
        (params as Record<string, unknown>)[field] = request[field];
    }
    if (toolId === 'ai_videos' && params.duration === undefined) params.duration = 5;
    if (extra.variant !== undefined) params.variant = extra.variant;
    if (extra.modelId !== undefined) params.modelId = extra.modelId;
    return {
      toolId,
      shotId,
      images: rest,
      fashionModel: fashion_model?.[0]
        ? { id: catalogIdOf(this.deps.catalog, 'fashion_model', modelRef), image: fashion_model[0] }
        : null,
      venue: venue?.[0]
        ? { id: catalogIdOf(this.deps.catalog, 'venue', venueRef), image: venue[0] }
        : null,
      pose: request.pose ? poseOf(this.deps.catalog, request.pose) : null,
      params,
      outputs: tool.outputs,
    };
  }

  private readySetEntry(set: Catalog['readySets'][number]): ReadyTemplateSetEntry {
    return {
      id: set.id,
      name: set.name,
      category: set.category,
      coverUrl: this.deps.resolver.catalogUrl(set.cover),
      shotCount: set.shots.length,
      shots: set.shots.map((s) => ({
        id: s.id,
        name: s.name,
        pose: s.pose,
        fashionModel: s.fashionModel,
        venue: s.venue,
        ratio: s.ratio,
      })),
    };
  }

  private async generationBody(job: JobRow): Promise<Omit<GenerationBody, 'success'>> {
    const results = await this.deps.store.jobs.resultsOf(job.id);
    const body: Omit<GenerationBody, 'success'> = {
      id: job.id,
      status: job.status,
      resultUrls:
        job.status === 'failed' ? [] : results.map((r) => this.deps.resolver.fileUrl(r.blobId)),
      errorMessage: job.status === 'failed' ? (job.errorMessage ?? 'the generation failed') : null,
    };
    if (job.kind === 'catalog') {
      const units = await this.deps.store.jobs.unitsOf(job.id);
      body.packTotal = units.length;
      body.packCompleted = units.filter((u) => u.status === 'completed').length;
      body.packFailed = units.filter((u) => u.status === 'failed').length;
      // Beyond the spec: which shot each URL belongs to, so a client can retry failed shots alone.
      body.shots = units.map((u) => ({
        shotId: u.shotId ?? String(u.idx),
        status: u.status,
        resultUrls: results
          .filter((r) => r.unitIdx === u.idx)
          .map((r) => this.deps.resolver.fileUrl(r.blobId)),
      }));
    } else if (isToolId(job.toolId) && getTool(job.toolId).outputs > 1) {
      const total = getTool(job.toolId).outputs;
      body.packTotal = total;
      body.packCompleted = results.length;
      body.packFailed = job.status === 'failed' ? total : 0;
    }
    return body;
  }
}

/** The free local plan renews monthly on the day the account was created. */
export function nextMonthlyRenewal(createdAt: string, now: Date): string {
  const start = new Date(createdAt);
  for (let months = 1; ; months++) {
    const next = new Date(start);
    next.setUTCMonth(start.getUTCMonth() + months);
    if (next > now) return next.toISOString();
  }
}
