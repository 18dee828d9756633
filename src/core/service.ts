/**
 * One method per /v1 endpoint: (authorization header, request) -> {status, body}. Every call is
 * authenticated and counted against the key's daily cap before any other work; domain errors
 * become the spec's `{success: false, error}` bodies here and nowhere else in the core.
 */
import type { WritableDB } from './db/types';
import type { Clock } from './clock';
import type { Catalog } from './catalog';
import type { ImageResolver, StoredImage } from './media/resolve';
import { catalogImage } from './media/resolve';
import type { BlobStore } from './media/blob-store';
import type { JobRunner } from './jobs/runner';
import type { ProviderAdapter } from './providers/types';
import { failAndRefund } from './jobs/runner';
import type { AuthenticatedKey } from './keys';
import type { KeyCache } from './key-cache';
import type { RequestCounter } from './request-counter';
import { balanceOf, charge } from './ledger';
import { newId } from './ids';
import { BadRequest, Conflict, Unauthorized, FailedAfterCharge, InsufficientDiamonds, NotFound, PayloadTooLarge, ServiceError, UnsupportedMediaType } from './errors';
import { forget, replay, remember, type Idempotency } from './idempotency';
import { assertPixelLimit } from './media/image-header';
import { assertQuota, StagedImages } from './media/staged-images';
import { parseOr400 } from './validation';
import { applyTemplate, RuleViolation, validateGeneration, type TemplateStyling } from './generation-request';
import { CATALOG_SHOT_PRICE, getTool, isToolId, toolEntries } from './tools';
import { sniffImage } from './media/sniff';
import * as jobs from './jobs/job-store';
import * as templates from './template-store';
import type { JobInput, StoredUnit } from './jobs/job-input';
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

export type ServiceResponse = { status: number; body: object };
/** Proof that a request was authenticated and counted (see Service.authorize). */
export type Authorized = { readonly authorized: AuthenticatedKey };
/** An Authorization header value, or an already authorized request. */
export type Auth = string | undefined | Authorized;
export type ServiceDeps = {
  db: WritableDB;
  blobs: BlobStore;
  catalog: Catalog;
  resolver: ImageResolver;
  runner: JobRunner;
  provider: ProviderAdapter;
  clock: Clock;
  requests: RequestCounter;
  keys: KeyCache;
  /** Bytes of uploaded and fetched images one account may keep; unbounded when absent. */
  storageQuotaBytes?: number;
  log?: (message: string) => void;
};

/** Ids echoed in messages are cut short: a hostile 8 KB id should not come back whole. */
const shown = (id: string) => (id.length > 64 ? `${id.slice(0, 64)}…` : id);
const ok = (body: object, status = 200): ServiceResponse => ({ status, body: { success: true, ...body } });

export class Service {
  private readonly finishedJobs = new FinishedJobCache(10_000);
  /** Requests with an Idempotency-Key still being answered: duplicates wait for the same answer. */
  private readonly inFlight = new Map<string, { bodyHash: string; answer: Promise<ServiceResponse> }>();

  constructor(private readonly deps: ServiceDeps) {}

  private now(): Date {
    return this.deps.clock.now();
  }

  /**
   * Authenticates and counts one request against the key's daily cap. Transports call it before
   * reading a body, so a refused request costs no work; endpoint methods accept its result.
   */
  authorize(authorization: string | undefined): Authorized {
    const key = this.deps.keys.authenticate(authorization);
    this.deps.requests.count(key, this.now());
    return { authorized: key };
  }

  /**
   * For in-process callers that hold a key id instead of the secret (the embedded studio):
   * the key must be active, and the request still counts against its daily cap.
   */
  authorizeKeyId(keyId: string): Authorized {
    const key = this.deps.db
      .prepare('SELECT id AS keyId, account_id AS accountId, daily_cap AS dailyCap FROM api_keys WHERE id = ? AND revoked_at IS NULL')
      .get(keyId) as AuthenticatedKey | undefined;
    if (!key) throw new Unauthorized();
    this.deps.requests.count(key, this.now());
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
      const key = typeof auth === 'object' ? auth.authorized : this.authorize(auth).authorized;
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
  private async once(key: AuthenticatedKey, idem: Idempotency, endpoint: () => Promise<ServiceResponse> | ServiceResponse): Promise<ServiceResponse> {
    const slot = `${key.accountId}\n${idem.endpoint}\n${idem.key}`;
    const running = this.inFlight.get(slot);
    if (running) {
      if (running.bodyHash !== idem.bodyHash) throw new Conflict('This Idempotency-Key was already used with a different request body');
      return running.answer;
    }
    const prior = replay(this.deps.db, key.accountId, idem, this.now());
    if (prior) return prior;
    const answer = Promise.resolve().then(endpoint);
    this.inFlight.set(slot, { bodyHash: idem.bodyHash, answer });
    try {
      return await answer;
    } finally {
      this.inFlight.delete(slot);
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
        .map((m) => ({ id: m.id, name: m.name, gender: m.gender, imageUrl: this.deps.resolver.catalogUrl(m.file) }));
      return ok({ fashionModels });
    });
  }

  listVenues(auth: Auth, query: unknown): Promise<ServiceResponse> {
    return this.call(auth, () => {
      const q = parseOr400(VenuesQuerySchema, query, 'query');
      const venues = this.deps.catalog.venues
        .slice(0, q.limit)
        .map((v) => ({ id: v.id, name: v.name, category: v.category, imageUrl: this.deps.resolver.catalogUrl(v.file) }));
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
        .map((p) => ({ id: p.id, name: p.name, type: p.type, imageUrl: this.deps.resolver.catalogUrl(p.file) }));
      return ok({ poses });
    });
  }

  upload(auth: Auth, data: Buffer, idem?: Idempotency): Promise<ServiceResponse> {
    return this.call(
      auth,
      async (key) => {
        if (data.length > LIMITS.uploadBytes) throw new PayloadTooLarge(`Upload is larger than the 8 MB (${LIMITS.uploadBytes} bytes) limit`);
        const mime = sniffImage(data);
        if (!mime) throw new UnsupportedMediaType();
        assertPixelLimit(data, 'The upload');
        const { db, blobs } = this.deps;
        const sha256 = await blobs.stage(data);
        try {
          return db.transaction((): ServiceResponse => {
            const prior = idem && replay(db, key.accountId, idem, this.now());
            if (prior) return prior;
            if (!blobs.accountHolds(key.accountId, sha256)) assertQuota(blobs, key.accountId, data.length, this.deps.storageQuotaBytes);
            const id = blobs.record(sha256, mime, data.length, 'upload', key.accountId, this.now());
            const response = ok({ id, url: this.deps.resolver.fileUrl(id) });
            if (idem) remember(db, key.accountId, idem, response, this.now());
            return response;
          }).immediate();
        } finally {
          await blobs.release(sha256);
        }
      },
      idem,
    );
  }

  createGeneration(auth: Auth, body: unknown, idem?: Idempotency): Promise<ServiceResponse> {
    return this.call(auth, (key) => this.withStaging((staged) => this.generation(key, body, idem, staged)), idem);
  }

  /** Runs `work` with a place for fetched images; whatever its transaction did not record is dropped. */
  private async withStaging(work: (staged: StagedImages) => Promise<ServiceResponse>): Promise<ServiceResponse> {
    const staged = new StagedImages(this.deps.blobs);
    try {
      return await work(staged);
    } finally {
      await staged.release();
    }
  }

  private async generation(key: AuthenticatedKey, body: unknown, idem: Idempotency | undefined, staged: StagedImages): Promise<ServiceResponse> {
    let request = parseOr400(GenerationRequestSchema, body, 'request body');
    let templateSetId: string | null = null;
    if (request.templateSetId) {
      const template = templates.get(this.deps.db, key.accountId, request.templateSetId);
      if (!template) throw new NotFound(`Template set ${request.templateSetId} not found`);
      request = applyTemplate(request, template);
      templateSetId = template.id;
    }
    const valid = validateGeneration(request);
    const price = valid.tool.price;
    this.requireBalance(key.accountId, price);

    const images: Record<string, StoredImage[]> = {};
    for (const [field, refs] of Object.entries(valid.images)) {
      images[field] = [];
      for (const ref of refs) images[field].push(await this.deps.resolver.resolve(ref, field, valid.tool.id, staged));
    }
    const unit = this.unit(valid.tool.id, images, valid.request, null);
    const input: JobInput = {
      units: [unit],
      styling: {
        images: Object.fromEntries(
          Object.entries(valid.images).filter(([k]) => k === 'fashion_model' || k === 'venue').map(([k, v]) => [k, v[0]!]),
        ),
        pose: valid.request.pose ?? null,
        shotType: valid.request.shotType ?? null,
        stylePreset: valid.request.stylePreset ?? null,
        ratio: valid.request.ratio ?? null,
      },
    };
    return this.submit(key, { kind: 'generation', toolId: valid.tool.id, price, input, templateSetId, readySetId: null, idem, staged }, (id) =>
      ok({ id, status: 'processing' }, 202),
    );
  }

  getGeneration(auth: Auth, id: string): Promise<ServiceResponse> {
    return this.call(auth, (key) => {
      const finished = this.finishedJobs.get(id, this.deps.resolver.publicOrigin);
      if (finished) {
        if (finished.accountId !== key.accountId) throw new NotFound(`Generation ${shown(id)} not found`);
        return ok(finished.body);
      }
      const job = IdSchema.safeParse(id).success ? jobs.getJob(this.deps.db, id) : undefined;
      if (!job || job.accountId !== key.accountId) throw new NotFound(`Generation ${shown(id)} not found`);
      const body = this.generationBody(job);
      // Completed and failed jobs never change again; polls of them skip SQLite.
      if (job.status !== 'processing') this.finishedJobs.set(id, { accountId: job.accountId, origin: this.deps.resolver.publicOrigin, body });
      return ok(body);
    });
  }

  createTemplateSet(auth: Auth, body: unknown): Promise<ServiceResponse> {
    return this.call(auth, async (key) => {
      const req = parseOr400(TemplateSetCreateSchema, body, 'request body');
      const label = req.label?.trim();
      if (!label) throw new BadRequest('label is required');
      let styling: Omit<TemplateStyling, 'id'>;
      let coverUrl: string | null = null;
      let sourceJobId: string | null = null;
      if (req.sourceMediaId !== undefined) {
        if (req.toolId !== undefined || req.images !== undefined) {
          throw new BadRequest('give either sourceMediaId or toolId with images, not both');
        }
        const job = jobs.getJob(this.deps.db, req.sourceMediaId);
        if (!job || job.accountId !== key.accountId) throw new NotFound(`sourceMediaId ${req.sourceMediaId} not found`);
        if (job.status !== 'completed') throw new BadRequest(`sourceMediaId ${job.id} has not completed (status: ${job.status})`);
        if (job.kind === 'catalog') throw new BadRequest('catalog jobs cannot be saved as template sets; replay the ready template set instead');
        if (!isToolId(job.toolId) || !getTool(job.toolId).saveable) {
          throw new BadRequest(`toolId '${job.toolId}' cannot be saved as a template set`);
        }
        const input = JSON.parse(job.input) as JobInput;
        styling = { toolId: job.toolId, ...input.styling };
        if (req.pose !== undefined) styling.pose = this.checkPose(req.pose);
        const first = jobs.resultsOf(this.deps.db, job.id)[0];
        coverUrl = first ? this.deps.resolver.fileUrl(first.blobId) : null;
        sourceJobId = job.id;
      } else {
        if (req.toolId === undefined) throw new BadRequest('either sourceMediaId or toolId with images is required');
        if (!isToolId(req.toolId) || !getTool(req.toolId).saveable) {
          throw new BadRequest(`toolId '${req.toolId}' cannot be saved as a template set (saveable: virtual_model, outfit_photo, pro_studio, jewelry_on_model, clothing_ecom_pack, jewelry_ecom_pack)`);
        }
        const images: Record<string, string> = {};
        for (const [field, value] of Object.entries(req.images ?? {})) {
          if (field !== 'fashion_model' && field !== 'venue') throw new BadRequest(`images.${field}: a template set saves only fashion_model and venue`);
          if (Array.isArray(value)) throw new BadRequest(`images.${field} takes one catalog id or URL`);
          await this.deps.resolver.resolve(value, field, req.toolId, null); // checked, not kept: the template saves the reference
          images[field] = value;
        }
        if (!images.fashion_model) throw new BadRequest('images.fashion_model is required');
        styling = {
          toolId: req.toolId,
          images,
          pose: req.pose === undefined ? null : this.checkPose(req.pose),
          shotType: req.shotType ?? null,
          stylePreset: req.stylePreset ?? null,
          ratio: req.ratio ?? null,
        };
      }
      const id = newId('ts', 12);
      templates.insert(this.deps.db, { id, accountId: key.accountId, label, ...styling, coverUrl, sourceJobId }, this.now());
      return ok({ id }, 201);
    });
  }

  listTemplateSets(auth: Auth): Promise<ServiceResponse> {
    return this.call(auth, (key) => {
      const templateSets = templates.list(this.deps.db, key.accountId).map((t) => ({
        ...t,
        images: Object.fromEntries(Object.entries(t.images).map(([field, ref]) => [field, this.imageUrlOf(field, ref)])),
      }));
      return ok({ templateSets });
    });
  }

  deleteTemplateSet(auth: Auth, id: string): Promise<ServiceResponse> {
    return this.call(auth, (key) => {
      const deleted = IdSchema.safeParse(id).success && templates.remove(this.deps.db, key.accountId, id);
      if (!deleted) throw new NotFound(`Template set ${shown(id)} not found`);
      return ok({});
    });
  }

  getAccount(auth: Auth): Promise<ServiceResponse> {
    return this.call(auth, (key) => {
      const row = this.deps.db
        .prepare(
          `SELECT email, balance, plan_status AS status, plan_product_id AS planProductId, plan_provider AS provider,
                  plan_is_premium AS isPremium, plan_cancel_at_period_end AS cancelAtPeriodEnd, plan_renews_at AS renewsAt,
                  created_at AS createdAt
           FROM accounts WHERE id = ?`,
        )
        .get(key.accountId) as {
        email: string; balance: number; status: AccountBody['plan']['status']; planProductId: string; provider: string;
        isPremium: number; cancelAtPeriodEnd: number; renewsAt: string | null; createdAt: string;
      };
      const body: Omit<AccountBody, 'success'> = {
        email: row.email,
        diamondBalance: row.balance,
        plan: {
          isPremium: row.isPremium === 1,
          status: row.status,
          planProductId: row.planProductId,
          provider: row.provider,
          cancelAtPeriodEnd: row.cancelAtPeriodEnd === 1,
          renewsAt: row.renewsAt ?? nextMonthlyRenewal(row.createdAt, this.now()),
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
        if (!/^[a-z0-9_-]{1,128}$/.test(after)) throw new BadRequest('cursor is not a cursor returned by this endpoint');
      }
      const sets = this.deps.catalog.readySets
        .filter((s) => s.active && (!q.category || s.category === q.category))
        .toSorted((a, b) => (a.id < b.id ? -1 : 1))
        .filter((s) => after === undefined || s.id > after);
      const page = sets.slice(0, q.limit);
      const last = page.at(-1);
      const nextCursor = sets.length > q.limit && last ? Buffer.from(last.id).toString('base64url') : null;
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
    return this.call(auth, (key) => this.withStaging((staged) => this.catalogJob(key, body, idem, staged)), idem);
  }

  private async catalogJob(key: AuthenticatedKey, body: unknown, idem: Idempotency | undefined, staged: StagedImages): Promise<ServiceResponse> {
    const req = parseOr400(CatalogJobRequestSchema, body, 'request body');
    if (!req.readyTemplateSetId) throw new BadRequest('readyTemplateSetId is required');
    const productField = (['garment_photo', 'user_photo', 'jewelry_image'] as const).find((f) => req.images?.[f] !== undefined);
    for (const field of Object.keys(req.images ?? {})) {
      if (field !== productField) throw new BadRequest(`catalog job: image field '${field}' is not accepted (give one product image in garment_photo)`);
    }
    if (!productField) throw new BadRequest("catalog job: missing required image 'garment_photo'");
    const set = this.deps.catalog.readySets.find((s) => s.id === req.readyTemplateSetId && s.active);
    if (!set) throw new NotFound(`Ready template set ${req.readyTemplateSetId} not found`);
    const wanted = req.shotIds ? [...new Set(req.shotIds)] : set.shots.map((s) => s.id);
    const shots = wanted.map((shotId) => {
      const shot = set.shots.find((s) => s.id === shotId);
      if (!shot) throw new BadRequest(`shot '${shotId}' is not part of ready template set ${set.id}`);
      return shot;
    });
    const price = CATALOG_SHOT_PRICE * shots.length;
    this.requireBalance(key.accountId, price);
    const productRef = req.images![productField]!;
    if (Array.isArray(productRef)) throw new BadRequest(`images.${productField} takes one URL`);
    const product = await this.deps.resolver.resolve(productRef, productField, 'catalog job', staged);
    const units = shots.map((shot, variant) =>
      this.unit(
        'virtual_model',
        { garment_photo: [product], fashion_model: [this.catalogFileOf('fashion_model', shot.fashionModel)], venue: [this.catalogFileOf('venue', shot.venue)] },
        { pose: shot.pose, ratio: req.ratio ?? shot.ratio, images: { fashion_model: shot.fashionModel, venue: shot.venue } },
        shot.id,
        { variant, modelId: req.modelId },
      ),
    );
    const first = shots[0]!;
    const input: JobInput = {
      units,
      styling: { images: { fashion_model: first.fashionModel, venue: first.venue }, pose: first.pose, shotType: null, stylePreset: null, ratio: req.ratio ?? null },
    };
    return this.submit(key, { kind: 'catalog', toolId: 'virtual_model', price, input, templateSetId: null, readySetId: set.id, idem, staged }, (id) =>
      ok({ mediaItemId: id, status: 'pack_processing', packTotal: shots.length, diamondCost: price, readyTemplateSetId: set.id, shotIds: shots.map((s) => s.id) }, 202),
    );
  }

  // ---- helpers -----------------------------------------------------------------------------

  /** Early 402 so a short balance is not spent fetching images; the charge re-checks. */
  private requireBalance(accountId: string, price: number): void {
    const balance = balanceOf(this.deps.db, accountId);
    if (balance < price) throw new InsufficientDiamonds(price, balance);
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
      kind: 'generation' | 'catalog'; toolId: ToolId; price: number; input: JobInput; templateSetId: string | null; readySetId: string | null;
      idem: Idempotency | undefined; staged: StagedImages;
    },
    respond: (jobId: string) => ServiceResponse,
  ): Promise<ServiceResponse> {
    const { db } = this.deps;
    const jobId = newId('job');
    const outcome = db.transaction((): { replayed: ServiceResponse } | { created: ServiceResponse } => {
      // Another process may have answered this key meanwhile (this process's duplicates wait in once()).
      const prior = job.idem && replay(db, key.accountId, job.idem, this.now());
      if (prior) return { replayed: prior };
      job.staged.record(key.accountId, this.deps.storageQuotaBytes, this.now());
      jobs.insertJob(db, { id: jobId, accountId: key.accountId, keyId: key.keyId, ...job }, this.now());
      charge(db, key.accountId, jobId, job.price, this.now());
      const response = respond(jobId);
      if (job.idem) remember(db, key.accountId, job.idem, response, this.now());
      return { created: response };
    }).immediate();
    if ('replayed' in outcome) return outcome.replayed;

    if (this.deps.provider.start) {
      try {
        for (const unit of job.input.units) await this.deps.provider.start(this.deps.runner.providerJob(jobId, unit));
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        const refunded = failAndRefund(db, jobId, `the generation could not start: ${reason}`, this.now(), () => {
          if (job.idem) forget(db, key.accountId, job.idem);
        });
        throw new FailedAfterCharge(`Generation ${jobId} failed after the charge (${reason}); ${refunded} diamonds were refunded`);
      }
    }
    this.deps.runner.enqueue(jobId);
    return outcome.created;
  }

  private unit(
    toolId: ToolId,
    images: Record<string, StoredImage[]>,
    request: { pose?: string; images?: unknown } & Partial<Record<Exclude<GenerationParamField, 'pose'>, string | number>>,
    shotId: string | null,
    extra: { variant?: number; modelId?: string | undefined } = {},
  ): StoredUnit {
    const { fashion_model, venue, ...rest } = images;
    const modelRef = (request.images as Record<string, unknown> | undefined)?.fashion_model;
    const venueRef = (request.images as Record<string, unknown> | undefined)?.venue;
    const tool = getTool(toolId);
    const params: StoredUnit['params'] = {};
    for (const field of GENERATION_PARAM_FIELDS) {
      if (field !== 'pose' && request[field] !== undefined) (params as Record<string, unknown>)[field] = request[field];
    }
    if (toolId === 'ai_videos' && params.duration === undefined) params.duration = 5;
    if (extra.variant !== undefined) params.variant = extra.variant;
    if (extra.modelId !== undefined) params.modelId = extra.modelId;
    return {
      toolId,
      shotId,
      images: rest,
      fashionModel: fashion_model?.[0] ? { id: this.catalogIdOf('fashion_model', modelRef), image: fashion_model[0] } : null,
      venue: venue?.[0] ? { id: this.catalogIdOf('venue', venueRef), image: venue[0] } : null,
      pose: request.pose ? this.poseOf(request.pose) : null,
      params,
      outputs: tool.outputs,
    };
  }

  private catalogIdOf(field: 'fashion_model' | 'venue', ref: unknown): string | null {
    if (typeof ref !== 'string') return null;
    const list = field === 'fashion_model' ? this.deps.catalog.fashionModels : this.deps.catalog.venues;
    return list.some((e) => e.id === ref) ? ref : null;
  }

  private catalogFileOf(field: 'fashion_model' | 'venue', id: string): StoredImage {
    const list = field === 'fashion_model' ? this.deps.catalog.fashionModels : this.deps.catalog.venues;
    const entry = list.find((e) => e.id === id);
    if (!entry) throw new Error(`catalog ${field} ${id} is missing`);
    return catalogImage(entry.file);
  }

  private checkPose(id: string): string {
    this.poseOf(id);
    return id;
  }

  private poseOf(id: string): NonNullable<StoredUnit['pose']> {
    const pose = this.deps.catalog.poses.find((p) => p.id === id);
    if (!pose) throw new BadRequest(`Unknown pose '${id}'; GET /v1/poses lists the valid ones`);
    return { id: pose.id, type: pose.type, image: catalogImage(pose.file) };
  }

  private imageUrlOf(field: string, ref: string): string {
    const list = field === 'fashion_model' ? this.deps.catalog.fashionModels : field === 'venue' ? this.deps.catalog.venues : [];
    const entry = list.find((e) => e.id === ref);
    return entry ? this.deps.resolver.catalogUrl(entry.file) : ref;
  }

  private readySetEntry(set: Catalog['readySets'][number]): ReadyTemplateSetEntry {
    return {
      id: set.id,
      name: set.name,
      category: set.category,
      coverUrl: this.deps.resolver.catalogUrl(set.cover),
      shotCount: set.shots.length,
      shots: set.shots.map((s) => ({ id: s.id, name: s.name, pose: s.pose, fashionModel: s.fashionModel, venue: s.venue, ratio: s.ratio })),
    };
  }

  private generationBody(job: jobs.JobRow): Omit<GenerationBody, 'success'> {
    const results = jobs.resultsOf(this.deps.db, job.id);
    const body: Omit<GenerationBody, 'success'> = {
      id: job.id,
      status: job.status,
      resultUrls: job.status === 'failed' ? [] : results.map((r) => this.deps.resolver.fileUrl(r.blobId)),
      errorMessage: job.status === 'failed' ? (job.errorMessage ?? 'the generation failed') : null,
    };
    if (job.kind === 'catalog') {
      const units = jobs.unitsOf(this.deps.db, job.id);
      body.packTotal = units.length;
      body.packCompleted = units.filter((u) => u.status === 'completed').length;
      body.packFailed = units.filter((u) => u.status === 'failed').length;
      // Beyond the spec: which shot each URL belongs to, so a client can retry failed shots alone.
      body.shots = units.map((u) => ({
        shotId: u.shotId ?? String(u.idx),
        status: u.status,
        resultUrls: results.filter((r) => r.unitIdx === u.idx).map((r) => this.deps.resolver.fileUrl(r.blobId)),
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

type FinishedJob = { accountId: string; origin: string; body: Omit<GenerationBody, 'success'> };

/** Least-recently-used responses of finished jobs, valid for the origin their URLs were built with. */
class FinishedJobCache {
  private readonly entries = new Map<string, FinishedJob>();
  constructor(private readonly capacity: number) {}

  get(id: string, origin: string): FinishedJob | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.origin !== origin) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry;
  }

  set(id: string, entry: FinishedJob): void {
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
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

export function errorResponse(err: unknown, log?: (message: string) => void): ServiceResponse {
  if (err instanceof RuleViolation) return { status: 400, body: { success: false, error: err.message } };
  if (err instanceof ServiceError) return { status: err.status, body: { success: false, error: err.message } };
  log?.(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return { status: 500, body: { success: false, error: 'Internal error; nothing was charged' } };
}
