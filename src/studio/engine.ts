/**
 * The batch-shoot engine: a durable queue in the studio's own SQLite file and a scheduler that
 * moves each photo through upload -> submit -> poll -> download -> review -> export. Every step
 * writes its journal entry (state, idempotency key, request) before the network call it guards,
 * so a crash at any point resumes without losing the photo or paying twice.
 */
import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, type ServiceClient } from '../client';
import { isCatalogRecipe, RecipeSchema, TERMINAL_STATES, type BudgetView, type ItemState, type ItemView, type Recipe, type StudioEvents, type WaitReason } from '../shared/studio';
import { openStudioDatabase, type StudioDB } from './db/open';
import * as store from './db/store';
import { Gates, backoffMs } from './gates';
import { Library } from './library';
import { lockDataFolder } from './lock';
import { countingClient } from './counting-client';
import { fillPhoto } from './one-shot';
import { pollUntilDone, typicalJobMs } from './poll';
import { exportApproved } from './export-step';

export type EngineOptions = {
  dataDir: string;
  client: ServiceClient;
  concurrency?: number;
  now?: () => Date;
  random?: () => number;
  backoff?: { baseMs: number; maxMs: number };
  /** While the daily cap is reached, how often work is let through to see if it was lifted. */
  capProbeMs?: number;
  /** How often a short balance is re-checked (402 gate). */
  balanceRecheckMs?: number;
  /** Give up on an item after this many failed attempts with a 5xx or lost answer. */
  maxAttempts?: number;
  /** The key's daily request cap when known (the API does not report it). */
  dailyCap?: number;
  /** Prepares a photo for upload (conversion, size limit, sRGB); identity by default. */
  prepareUpload?: (file: string) => Promise<Buffer>;
  log?: (message: string) => void;
};

const ACTIVE_STATES: readonly ItemState[] = ['queued', 'uploading', 'submitting', 'processing', 'downloading', 'exporting'];

type TypedEmitter = {
  on<K extends keyof StudioEvents>(event: K, listener: (data: StudioEvents[K]) => void): unknown;
  off<K extends keyof StudioEvents>(event: K, listener: (data: StudioEvents[K]) => void): unknown;
  emit<K extends keyof StudioEvents>(event: K, data: StudioEvents[K]): boolean;
};

/** Stable hash of a recipe, for "same photo + same recipe already done". */
export function recipeHash(recipe: Recipe): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)]))
        : value;
  return createHash('sha256').update(JSON.stringify(canonical(recipe))).digest('hex');
}

/** A batch's ceiling and the diamonds counted against it so far in this tick. */
type BatchCeiling = { max: number; committed: number };

export class StudioEngine {
  readonly db: StudioDB;
  readonly library: Library;
  readonly events = new EventEmitter().setMaxListeners(100) as TypedEmitter;
  readonly gates: Gates;
  private readonly running = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private kicked = false;
  private stopped = true;
  private prices = new Map<string, number>();

  private readonly unlock: () => void;

  constructor(private readonly opts: EngineOptions) {
    this.unlock = lockDataFolder(opts.dataDir);
    this.db = openStudioDatabase(path.join(opts.dataDir, 'studio.db'));
    this.library = new Library(path.join(opts.dataDir, 'library'));
    this.gates = new Gates(opts.capProbeMs);
    this.client = countingClient(opts.client, () => store.countRequest(this.db, opts.client.origin, this.now().toISOString().slice(0, 10)));
  }

  /** The service client; every API call through it is counted for today's request budget. */
  readonly client: ServiceClient;

  now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /** Starts scheduling; items left mid-flight by a crash resume from their journal. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), 250);
    this.kick();
  }

  /** Stops taking work and waits for running steps to reach a safe point. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.running.values()]);
  }

  async close(): Promise<void> {
    await this.stop();
    this.db.close();
    this.unlock();
  }

  get paused(): boolean {
    return store.getSetting(this.db, 'paused') === '1';
  }

  setPaused(paused: boolean): void {
    store.setSetting(this.db, 'paused', paused ? '1' : '0');
    if (!paused) this.kick();
  }

  // ---- intake ---------------------------------------------------------------------------------

  createBatch(input: { kind: 'run' | 'folder'; outputDir: string; folderId?: string | null; autoApprove?: boolean; ceiling?: number | null }): string {
    const id = `batch_${randomUUID()}`;
    this.db
      .prepare('INSERT INTO batches (id, folder_id, kind, output_dir, auto_approve, ceiling, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, input.folderId ?? null, input.kind, input.outputDir, input.autoApprove ? 1 : 0, input.ceiling ?? null, this.now().toISOString());
    return id;
  }

  /**
   * Queues one photo with a snapshot of its recipe. The same photo with the same recipe already
   * done (or on its way) is recorded as skipped with a note, and nothing is spent.
   */
  enqueue(input: { batchId: string; folderId?: string | null; sourcePath: string; rootDir: string; sha256: string; recipe: Recipe; reprocess?: boolean }): ItemView {
    const recipe = RecipeSchema.parse(input.recipe);
    const hash = recipeHash(recipe);
    const rel = path.relative(input.rootDir, path.dirname(input.sourcePath));
    const id = `item_${randomUUID()}`;
    const now = this.now().toISOString();
    const adopted = this.db.transaction((): string | null => {
      const twin = input.reprocess ? undefined : store.findEquivalent(this.db, input.sha256, hash);
      const twinBatch = twin && store.getBatch(this.db, twin.batchId);
      if (twin && twin.state !== 'exported' && twinBatch?.kind === 'run' && store.getBatch(this.db, input.batchId)?.kind === 'run') {
        // A `run` interrupted earlier: this batch takes the unfinished item over instead of
        // queueing the photo again (its journal says how far it got).
        this.db.prepare('UPDATE items SET batch_id = ?, wait_reason = NULL, wait_until = NULL WHERE id = ?').run(input.batchId, twin.id);
        return twin.id;
      }
      store.insertItem(this.db, {
        id,
        batchId: input.batchId,
        folderId: input.folderId ?? null,
        sourcePath: input.sourcePath,
        rootDir: input.rootDir,
        relativeDir: rel === '' ? '' : rel.split(path.sep).join('/'),
        name: path.basename(input.sourcePath),
        sha256: input.sha256,
        recipe: JSON.stringify(recipe),
        recipeHash: hash,
        toolId: isCatalogRecipe(recipe.request) ? 'catalog' : (recipe.request.toolId ?? 'template'),
        state: twin ? 'skipped' : 'queued',
        waitReason: null,
        note: twin ? `same photo and recipe already ${twin.state === 'exported' ? 'exported' : 'queued'} as ${twin.name} (${twin.id}); nothing spent` : null,
        createdAt: now,
      });
      return null;
    }).immediate();
    if (adopted) {
      this.emitItem(adopted);
      this.kick();
      return store.itemView(store.getItem(this.db, adopted)!);
    }
    this.emitItem(id);
    this.kick();
    return store.itemView(store.getItem(this.db, id)!);
  }

  // ---- scheduler ------------------------------------------------------------------------------

  kick(): void {
    if (this.stopped || this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      this.tick();
    });
  }

  private tick(): void {
    if (this.stopped || this.paused) return;
    const now = this.now();
    const capOpen = this.gates.capOpen(now);
    this.maybeRecheckBalance(now);
    const slots = (this.opts.concurrency ?? 4) - this.running.size;
    if (slots <= 0) return;
    const pausedFolders = new Set(store.listFolders(this.db).filter((f) => f.paused === 1).map((f) => f.id));
    const ceilings = new Map<string, BatchCeiling | null>();
    let started = 0;
    for (const item of store.itemsInStates(this.db, ACTIVE_STATES)) {
      if (started >= slots) break;
      if (this.running.has(item.id)) continue;
      if (item.folderId && pausedFolders.has(item.folderId)) {
        if (item.state === 'queued') this.setWait(item, 'paused', null);
        continue;
      }
      if (item.uncertain === 1) continue;
      if (item.waitUntil && Date.parse(item.waitUntil) > now.getTime()) continue;
      const needsApi = item.state !== 'exporting';
      if (needsApi && !capOpen) {
        // The gate, not the item, knows when to try again (next UTC day, or a probe).
        this.setWait(item, 'daily_cap', null);
        continue;
      }
      if (item.state === 'queued' || item.state === 'uploading' || item.state === 'submitting') {
        if (this.gates.diamonds) {
          this.setWait(item, 'no_diamonds', null);
          continue;
        }
        if (item.state === 'queued') {
          const ceiling = this.ceilingOf(item.batchId, ceilings);
          const price = this.priceOf(item);
          if (ceiling && ceiling.committed + price > ceiling.max) {
            this.setWait(item, 'ceiling', null);
            continue;
          }
          if (ceiling) ceiling.committed += price; // started below: the next item counts it
        }
      }
      started++;
      const run = this.step(item.id)
        .catch((err: unknown) => this.opts.log?.(`item ${item.id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`))
        .finally(() => {
          this.running.delete(item.id);
          this.kick();
        });
      this.running.set(item.id, run);
    }
  }

  /**
   * A batch's diamond ceiling and what counts against it: what the batch has been charged, plus
   * what items already on their way will be. Read once per tick and batch (the cache).
   */
  private ceilingOf(batchId: string, cache: Map<string, BatchCeiling | null>): BatchCeiling | null {
    if (!cache.has(batchId)) {
      const batch = store.getBatch(this.db, batchId);
      const admitted = () =>
        store
          .itemsInStates(this.db, ['uploading', 'submitting'])
          .filter((i) => i.batchId === batchId && i.diamonds === 0)
          .reduce((sum, i) => sum + this.priceOf(i), 0);
      cache.set(batchId, !batch || batch.ceiling === null ? null : { max: batch.ceiling, committed: store.batchSpent(this.db, batchId) + admitted() });
    }
    return cache.get(batchId) ?? null;
  }

  /** Sets (or lifts, with null) a batch's diamond ceiling; items waiting on it are let through. */
  setCeiling(batchId: string, ceiling: number | null): void {
    this.db.prepare('UPDATE batches SET ceiling = ? WHERE id = ?').run(ceiling, batchId);
    this.clearWaits('ceiling', { batchId });
    this.kick();
  }

  private maybeRecheckBalance(now: Date): void {
    const gate = this.gates.diamonds;
    if (!gate || now.getTime() - gate.checkedAt < (this.opts.balanceRecheckMs ?? 30_000)) return;
    gate.checkedAt = now.getTime();
    this.client
      .getAccount()
      .then((account) => {
        if (account.diamondBalance >= gate.needed && this.gates.diamonds === gate) {
          this.gates.diamonds = null;
          this.clearWaits('no_diamonds');
          this.kick();
        }
      })
      .catch(() => undefined);
  }

  /** Lets items waiting for `reason` go (all of them, or one batch's or folder's). */
  clearWaits(reason: WaitReason, scope: { batchId?: string; folderId?: string } = {}): void {
    const filters: [string, string][] = [['wait_reason', reason]];
    if (scope.batchId) filters.push(['batch_id', scope.batchId]);
    if (scope.folderId) filters.push(['folder_id', scope.folderId]);
    const where = filters.map(([column]) => `${column} = ?`).join(' AND ');
    const args = filters.map(([, value]) => value);
    const rows = this.db.prepare(`SELECT id FROM items WHERE ${where}`).all(...args) as { id: string }[];
    this.db.prepare(`UPDATE items SET wait_reason = NULL, wait_until = NULL WHERE ${where}`).run(...args);
    // Engine-wide gates (diamonds, daily cap) are also shown on the folders.
    if (!scope.batchId && !scope.folderId) this.db.prepare('UPDATE folders SET wait_reason = NULL WHERE wait_reason = ?').run(reason);
    for (const r of rows) this.emitItem(r.id);
  }

  private setWait(item: store.ItemRow, reason: WaitReason, until: Date | null): void {
    const untilIso = until?.toISOString() ?? null;
    if (item.waitReason === reason && item.waitUntil === untilIso) return;
    store.updateItem(this.db, item.id, { waitReason: reason, waitUntil: untilIso }, this.now());
    if (item.folderId && (reason === 'no_diamonds' || reason === 'daily_cap')) {
      this.db.prepare('UPDATE folders SET wait_reason = ? WHERE id = ?').run(reason, item.folderId);
    }
    this.emitItem(item.id);
  }

  // ---- one step of one item ---------------------------------------------------------------

  private async step(id: string): Promise<void> {
    const item = store.getItem(this.db, id);
    if (!item || !ACTIVE_STATES.includes(item.state)) return;
    if (item.waitReason) store.updateItem(this.db, id, { waitReason: null, waitUntil: null }, this.now());
    try {
      await this.runStep(item);
      this.gates.apiSucceeded();
    } catch (err) {
      if (this.abort.signal.aborted) return;
      // Any answer other than 429 shows the cap is not (or no longer) in the way.
      if (err instanceof ApiError && err.status !== 0 && err.status !== 429) this.gates.apiSucceeded();
      this.handleError(store.getItem(this.db, id) ?? item, err);
    } finally {
      this.emitItem(id);
    }
  }

  private async runStep(item: store.ItemRow): Promise<void> {
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

  private transition(id: string, patch: store.ItemPatch): void {
    this.db.transaction(() => store.updateItem(this.db, id, patch, this.now())).immediate();
    this.emitItem(id);
  }

  private recipeOf(item: store.ItemRow): Recipe {
    return RecipeSchema.parse(JSON.parse(item.recipe));
  }

  private async upload(item: store.ItemRow): Promise<void> {
    let uploadKey = item.uploadKey;
    if (!uploadKey) {
      uploadKey = `upload-${item.id}`;
      this.transition(item.id, { uploadKey, state: 'uploading' });
    }
    const data = this.opts.prepareUpload ? await this.opts.prepareUpload(item.sourcePath) : await fs.promises.readFile(item.sourcePath);
    const uploaded = await this.client.upload(data, { idempotencyKey: uploadKey });
    this.learnIdempotency(uploaded.idempotencyHonoured);
    const recipe = this.recipeOf(item);
    const request = isCatalogRecipe(recipe.request)
      ? { ...recipe.request, images: fillImages(recipe.request.images, uploaded.url) }
      : fillPhoto(recipe.request, uploaded.url);
    // Journal before the spending call: the request and its idempotency key.
    this.transition(item.id, {
      uploadUrl: uploaded.url,
      state: 'submitting',
      submitKey: `submit-${item.id}-${randomUUID()}`,
      submitRequest: JSON.stringify(request),
      submittedAt: null,
      attempts: 0,
    });
    const next = store.getItem(this.db, item.id);
    if (next && !this.abort.signal.aborted) await this.submit(next);
  }

  /**
   * How long jobs of this tool take here, learnt from the last ones (moving average), so the
   * first poll lands just after the job is done: most jobs then cost one or two polls.
   */
  private expectedJobMs(toolId: string): number {
    const learnt = Number(store.getSetting(this.db, `job-ms:${toolId}`));
    return learnt > 0 ? learnt * 1.1 : typicalJobMs(toolId);
  }

  private learnJobTime(toolId: string, ms: number): void {
    const previous = Number(store.getSetting(this.db, `job-ms:${toolId}`));
    const next = previous > 0 ? previous * 0.7 + ms * 0.3 : ms;
    store.setSetting(this.db, `job-ms:${toolId}`, String(Math.round(next)));
  }

  private honoursIdempotency(): boolean {
    return store.getSetting(this.db, `idempotency:${this.client.origin}`) === 'yes';
  }

  private learnIdempotency(honoured: boolean): void {
    store.setSetting(this.db, `idempotency:${this.client.origin}`, honoured ? 'yes' : 'no');
  }

  private async submit(item: store.ItemRow): Promise<void> {
    if (!item.submitRequest || !item.submitKey) throw new Error('submission journal is missing');
    if (item.submittedAt && !this.honoursIdempotency()) {
      // An earlier attempt may have reached the service and been charged; only a person can tell.
      this.transition(item.id, { uncertain: 1, waitReason: 'uncertain', note: 'the answer to the submission was lost and this service does not confirm Idempotency-Key; check the service before resubmitting' });
      return;
    }
    this.transition(item.id, { submittedAt: this.now().toISOString() });
    const request = JSON.parse(item.submitRequest) as Record<string, unknown>;
    const recipe = this.recipeOf(item);
    let jobId: string;
    let price: number;
    let packTotal: number | null = null;
    if (isCatalogRecipe(recipe.request)) {
      const created = await this.client.createCatalogJob(request as Parameters<ServiceClient['createCatalogJob']>[0], { idempotencyKey: item.submitKey });
      this.learnIdempotency(created.idempotencyHonoured);
      jobId = created.mediaItemId;
      price = created.diamondCost;
      packTotal = created.packTotal;
    } else {
      const created = await this.client.createGeneration(request as Parameters<ServiceClient['createGeneration']>[0], { idempotencyKey: item.submitKey });
      this.learnIdempotency(created.idempotencyHonoured);
      jobId = created.id;
      price = await this.toolPrice(String(request.toolId ?? item.toolId));
    }
    this.transition(item.id, { jobId, price, diamonds: price, packTotal, state: 'processing', attempts: 0 });
    this.balanceMoved(-price);
    const next = store.getItem(this.db, item.id);
    if (next && !this.abort.signal.aborted) await this.poll(next);
  }

  private async poll(item: store.ItemRow): Promise<void> {
    if (!item.jobId) throw new Error('no job id recorded');
    const firstDelay = item.submittedAt ? Math.max(0, Date.parse(item.submittedAt) + this.expectedJobMs(item.toolId) - this.now().getTime()) : 0;
    const job = await pollUntilDone(this.client, item.jobId, {
      firstDelayMs: firstDelay,
      signal: this.abort.signal,
      onProgress: (progress) => {
        if (progress.packTotal !== undefined) {
          this.transition(item.id, { packTotal: progress.packTotal, packCompleted: progress.packCompleted ?? null, packFailed: progress.packFailed ?? null });
        }
      },
    });
    if (item.submittedAt) this.learnJobTime(item.toolId, this.now().getTime() - Date.parse(item.submittedAt));
    if (job.status === 'failed') {
      // The service refunds a failed job; nothing stays spent.
      this.transition(item.id, { state: 'failed', error: job.errorMessage ?? 'the generation failed', diamonds: 0 });
      this.balanceMoved(item.diamonds);
      return;
    }
    const shotMap = job.shots?.flatMap((s) => s.resultUrls.map(() => s.shotId)) ?? null;
    const failedShots = job.shots?.filter((s) => s.status === 'failed').map((s) => s.shotId) ?? [];
    this.transition(item.id, {
      state: 'downloading',
      resultUrls: JSON.stringify(job.resultUrls),
      shotMap: shotMap ? JSON.stringify(shotMap) : null,
      failedShots: failedShots.length ? JSON.stringify(failedShots) : null,
      note: failedShots.length ? `${failedShots.length} shot(s) failed: ${failedShots.join(', ')} (retry them alone)` : item.note,
    });
    const next = store.getItem(this.db, item.id);
    if (next && !this.abort.signal.aborted) await this.download(next);
  }

  private async download(item: store.ItemRow): Promise<void> {
    const urls = JSON.parse(item.resultUrls ?? '[]') as string[];
    const shots = JSON.parse(item.shotMap ?? 'null') as string[] | null;
    const have = new Set(store.resultsOf(this.db, item.id).map((r) => r.n));
    for (const [n, url] of urls.entries()) {
      if (have.has(n)) continue;
      const { data, mime } = await this.client.download(url);
      const stored = await this.library.store(data, mime, {
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
      store.insertResult(this.db, { id: resultId, itemId: item.id, n, shotId: shots?.[n] ?? null, sha256: stored.sha256, mime, file: stored.file, thumb: stored.thumb, createdAt: this.now().toISOString() });
      const row = store.getResult(this.db, resultId);
      if (row) this.events.emit('result.added', store.resultView(row));
    }
    const batch = store.getBatch(this.db, item.batchId);
    if (batch?.autoApprove === 1) {
      this.db.transaction(() => {
        for (const r of store.resultsOf(this.db, item.id)) store.setReview(this.db, r.id, 'approved');
        store.updateItem(this.db, item.id, { state: 'exporting' }, this.now());
      }).immediate();
      this.emitItem(item.id);
      const next = store.getItem(this.db, item.id);
      if (next && !this.abort.signal.aborted) await this.exportItem(next);
    } else {
      this.transition(item.id, { state: 'review' });
    }
  }

  private async exportItem(item: store.ItemRow): Promise<void> {
    const batch = store.getBatch(this.db, item.batchId);
    const results = store.resultsOf(this.db, item.id);
    if (results.some((r) => r.review === 'pending')) {
      this.transition(item.id, { state: 'review' });
      return;
    }
    const exported = await exportApproved({
      db: this.db,
      library: this.library,
      item,
      recipe: this.recipeOf(item),
      outputDir: batch?.outputDir ?? path.dirname(item.sourcePath),
      now: this.now(),
      onResult: (row) => this.events.emit('result.changed', store.resultView(row)),
    });
    if (exported > 0 || results.some((r) => r.exportedPath)) {
      this.transition(item.id, { state: 'exported', error: null });
    } else {
      this.transition(item.id, { state: 'failed', error: 'every result was rejected in review' });
    }
  }

  // ---- errors -------------------------------------------------------------------------------

  private handleError(item: store.ItemRow, err: unknown): void {
    const now = this.now();
    const message = err instanceof Error ? err.message : String(err);
    if (!(err instanceof ApiError)) {
      this.transition(item.id, { state: 'failed', error: message });
      return;
    }
    const inSubmission = item.state === 'submitting';
    if (err.status === 402) {
      // Nothing was charged: the submission can safely be made again when diamonds arrive.
      this.gates.shortOfDiamonds(item.price || this.priceOf(item), now);
      this.transition(item.id, { submittedAt: null, waitReason: 'no_diamonds' });
      if (item.folderId) this.db.prepare("UPDATE folders SET wait_reason = 'no_diamonds' WHERE id = ?").run(item.folderId);
      return;
    }
    if (err.status === 429) {
      this.gates.capReached(now);
      // A 429 means the call was refused before any work: nothing was submitted or charged.
      this.transition(item.id, inSubmission ? { submittedAt: null, waitReason: 'daily_cap' } : { waitReason: 'daily_cap' });
      return;
    }
    if (err.retryable) {
      const attempts = item.attempts + 1;
      if (err.status !== 0 && attempts >= (this.opts.maxAttempts ?? 12)) {
        this.transition(item.id, { state: 'failed', error: `gave up after ${attempts} attempts: ${message}` });
        return;
      }
      const { baseMs, maxMs } = this.opts.backoff ?? { baseMs: 1000, maxMs: 60_000 };
      const wait = backoffMs(attempts, baseMs, maxMs, this.opts.random ?? Math.random);
      this.transition(item.id, { attempts, waitReason: err.status === 0 ? 'offline' : 'service_error', waitUntil: new Date(now.getTime() + wait).toISOString(), error: message });
      return;
    }
    // 400, 404, 413, 415…: this photo or recipe cannot succeed as it is; the batch goes on.
    this.transition(item.id, { state: 'failed', error: message, ...(inSubmission ? { submittedAt: null } : {}) });
  }

  // ---- prices, budget and views -------------------------------------------------------------

  private balanceCache: { value: number; at: number } | null = null;

  /** Balance (cached briefly: each check is an API request) and today's request count. */
  /** Whether any item is still on its way (not finished, not waiting for review). */
  hasActiveItems(): boolean {
    return store.itemsInStates(this.db, ACTIVE_STATES).length > 0;
  }

  /**
   * A charge or a refund we know of: the remembered balance follows it and the UI hears about it,
   * without an account request per job (those count against the daily cap).
   */
  private balanceMoved(delta: number): void {
    if (this.balanceCache) this.balanceCache.value += delta;
    this.budget().then(
      (budget) => this.events.emit('budget.changed', budget),
      () => undefined,
    );
  }

  async budget(): Promise<BudgetView> {
    const now = this.now();
    if (!this.balanceCache || now.getTime() - this.balanceCache.at > 15_000) {
      try {
        const account = await this.client.getAccount();
        this.balanceCache = { value: account.diamondBalance, at: now.getTime() };
      } catch {
        // Offline: show what we last knew.
      }
    }
    return {
      diamondBalance: this.balanceCache?.value ?? null,
      requestsUsedToday: store.requestsOn(this.db, this.client.origin, now.toISOString().slice(0, 10)),
      dailyCap: this.opts.dailyCap ?? null,
      mode: this.client.origin === 'embedded' ? 'embedded' : 'remote',
    };
  }

  async toolPrice(toolId: string): Promise<number> {
    if (this.prices.size === 0) {
      for (const model of await this.client.listModels()) this.prices.set(model.id, model.fallbackPriceDiamonds);
    }
    return this.prices.get(toolId) ?? 0;
  }

  private priceOf(item: store.ItemRow): number {
    return item.price || this.prices.get(item.toolId) || 1;
  }

  emitItem(id: string): void {
    const row = store.getItem(this.db, id);
    if (row) this.events.emit('item.changed', store.itemView(row));
  }

  isTerminal(state: ItemState): boolean {
    return TERMINAL_STATES.includes(state);
  }

  /**
   * Resolves when every item of the batch has reached a terminal state (or review), or is held
   * by one of `heldBy` (a ceiling, say), which only the operator can lift.
   */
  async waitForBatch(batchId: string, settled: readonly ItemState[] = TERMINAL_STATES, heldBy: readonly WaitReason[] = []): Promise<void> {
    const done = () =>
      (
        this.db
          .prepare(
            `SELECT COUNT(*) AS n FROM items WHERE batch_id = ? AND state NOT IN (${settled.map(() => '?').join(',')}) AND uncertain = 0
             AND (wait_reason IS NULL OR wait_reason NOT IN (${heldBy.map(() => '?').join(',') || "''"}))`,
          )
          .get(batchId, ...settled, ...heldBy) as { n: number }
      ).n === 0 && (heldBy.length === 0 || ![...this.running.keys()].some((id) => store.getItem(this.db, id)?.batchId === batchId));
    if (done()) return;
    await new Promise<void>((resolve) => {
      const listener = () => {
        if (done()) {
          this.events.off('item.changed', listener);
          clearInterval(timer);
          resolve();
        }
      };
      const timer = setInterval(listener, 1000);
      this.events.on('item.changed', listener);
    });
  }
}

function fillImages(images: Record<string, string | string[]> | undefined, url: string): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(images ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => (x === '{photo}' ? url : x)) : v === '{photo}' ? url : v]),
  );
}

