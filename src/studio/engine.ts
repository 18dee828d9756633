/**
 * The batch-shoot engine: wires the durable queue (queue.ts), admission (scheduler.ts), poll
 * timing (poller.ts), requests and diamonds (budget.ts), the 402/429 gates (gates.ts) and the
 * per-photo steps (runner.ts) over the studio's own SQLite file, and is what the contract's
 * commands, hot folders and `run` talk to.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { ApiError, isUnnamedJob, type ServiceClient } from '../client';
import {
  ACTIVE_STATES,
  isReadyShootRecipe,
  jobGroup,
  RecipeSchema,
  requestJobGroup,
  TERMINAL_STATES,
  type BudgetView,
  type ItemState,
  type ItemView,
  type Recipe,
  type StudioEvents,
  type WaitReason,
} from '../shared/studio';
import {
  Budget,
  budgetKey,
  DEFAULT_DAILY_CAP,
  isReserveWaitText,
  SHOT_PRICE,
  type PriceQuote,
} from './budget';
import { CommandError } from './command-error';
import { countingClient } from './counting-client';
import { openStudioDatabase, type StudioDB } from './db/open';
import * as store from './db/store';
import { backoffMs, Gates } from './gates';
import { Library } from './library';
import { lockDataFolder } from './lock';
import { Poller } from './poller';
import { enqueue as enqueueItem, recipeHash, resolveUncertain, type EnqueueInput } from './queue';
import { HELD_BY_HIDDEN_JOBS } from './hidden-jobs';
import { RESULTS_HELD } from './result-download';
import { Runner } from './runner';
import { Scheduler } from './scheduler';

/** States of a photo sent (or to be sent) whose poll has not yet shown its job. */
const ON_ITS_WAY = new Set<string>(['queued', 'uploading', 'submitting', 'processing']);

export { recipeHash };

export type EngineOptions = {
  dataDir: string;
  client: ServiceClient;
  /** Steps that hold a slot at once: uploads, submissions, downloads, exports (not waiting polls). */
  concurrency?: number;
  /** Polls in flight at once (a job waiting for its next poll holds nothing). */
  pollConcurrency?: number;
  now?: () => Date;
  random?: () => number;
  backoff?: { baseMs: number; maxMs: number };
  /** While the daily cap is reached, how often one request is let through to see if it was raised. */
  capProbeMs?: number;
  /** First re-read of a short balance (402 gate); later reads back off. */
  balanceRecheckMs?: number;
  /**
   * How long after a lost create's key first went out its record may still be in flight (the
   * service refused the key's reuse): the resend waits this long. Default 5 minutes.
   */
  keyRecordGraceMs?: number;
  /** Give up on an unpaid item after this many failed attempts with a 5xx. */
  maxAttempts?: number;
  /** The key's daily request cap (the API does not report it); remote default 500. */
  dailyCap?: number;
  /** The API key, only to tell keys apart in the request count (a hash is stored, never the key). */
  apiKey?: string;
  /** Longest gap between two polls of a running job. */
  maxPollGapMs?: number;
  /**
   * Prepares a photo for upload (conversion, size limit, sRGB); identity by default. `maxBytes`:
   * under a smaller limit than planned (an upload refused 413).
   */
  prepareUpload?: (source: Buffer, maxBytes?: number) => Promise<Buffer>;
  log?: (message: string) => void;
};

type TypedEmitter = {
  on<K extends keyof StudioEvents>(event: K, listener: (data: StudioEvents[K]) => void): unknown;
  off<K extends keyof StudioEvents>(event: K, listener: (data: StudioEvents[K]) => void): unknown;
  emit<K extends keyof StudioEvents>(event: K, data: StudioEvents[K]): boolean;
};

export class StudioEngine {
  readonly db: StudioDB;
  readonly library: Library;
  readonly events = new EventEmitter().setMaxListeners(100) as TypedEmitter;
  readonly gates: Gates;
  readonly spending: Budget;
  readonly poller: Poller;
  /** The service client; every API call through it is counted for today's request budget. */
  readonly client: ServiceClient;
  /**
   * A step has let go of its item (after its last item.changed): what waits for a batch to be done
   * hears it then, not up to a second later on its timer (the end of every `run`).
   */
  private readonly stepEnds = new EventEmitter();
  /** Steps holding a slot, and polls in flight. */
  readonly running = new Map<string, Promise<void>>();
  readonly polling = new Map<string, Promise<void>>();
  /** Jobs submitted before this moment were not followed from the start (no job-time sample). */
  readonly startedAt: number;
  private readonly runner: Runner;
  readonly scheduler: Scheduler;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private kicked = false;
  private stopped = true;
  /** The one batch new spending goes to (a `run`'s), or null: every batch's (the studio). */
  private onlyBatch: string | null = null;
  private readonly unlock: () => void;
  private readonly releaseCount: () => void;
  private balanceCache: { value: number; at: number } | null = null;
  private readonly shotCountsLoading = new Set<string>();

  constructor(readonly options: EngineOptions) {
    this.unlock = lockDataFolder(options.dataDir);
    try {
      this.db = openStudioDatabase(path.join(options.dataDir, 'studio.db'));
    } catch (err) {
      this.unlock();
      throw err;
    }
    this.library = new Library(path.join(options.dataDir, 'library'));
    this.gates = new Gates({
      ...(options.capProbeMs !== undefined ? { capProbeMs: options.capProbeMs } : {}),
      balanceRecheckMs: options.balanceRecheckMs ?? 10_000,
      // A poll's back-off, shared by the paid jobs while the service refuses to show them.
      hiddenJobs: {
        probeDelayMs: (refusals) => {
          const { baseMs, maxMs } = options.backoff ?? { baseMs: 1000, maxMs: 60_000 };
          return backoffMs(refusals, baseMs, maxMs, options.random ?? Math.random);
        },
        maxRefusals: options.maxAttempts ?? 12,
        slowProbeMs: 15 * 60_000,
      },
      // Built below; a 429 comes only once requests go out.
      requestsToday: () => ({
        used: this.spending.requestsUsedToday(),
        cap: this.spending.workingCap(),
      }),
    });
    const remote = options.client.origin !== 'embedded';
    const key = budgetKey(options.client.origin, options.apiKey);
    // Counted before the call goes out, in the studio's own store, per key and UTC day; refused
    // without being sent once the configured cap is reached.
    const counted = countingClient(
      options.client,
      () => {
        this.spending.takeRequest();
        this.showRequestCount();
      },
      // A request that never left (refused, host unknown) is not one of the day's.
      () => {
        this.spending.giveBackRequest();
        this.showRequestCount();
      },
    );
    this.client = counted.client;
    this.releaseCount = counted.release;
    this.spending = new Budget(
      this.db,
      this.client,
      key,
      options.dailyCap ?? (remote ? DEFAULT_DAILY_CAP : null),
      () => this.now(),
      (err) => this.gates.tooManyRequests(err, this.now()),
      // Only a day the service's 429 closed: the request kept for the closing read of a cap as
      // remembered is answered by design, and says nothing of a raise (`probeCap` asks that).
      (sentAt) => {
        if (this.gates.cap?.kind === 'service') this.gates.apiSucceeded(sentAt);
      },
    );
    // A reading below its list prices is read again from half the short balance's re-read on.
    this.spending.lagRecheckMs = (options.balanceRecheckMs ?? 10_000) / 2;
    // A refund a reading did not show is looked for again from three times that re-read on.
    this.spending.refundRecheckMs = (options.balanceRecheckMs ?? 10_000) * 3;
    this.poller = new Poller(
      this.db,
      options.maxPollGapMs !== undefined ? { maxGapMs: options.maxPollGapMs } : {},
    );
    this.runner = new Runner(this);
    this.resumeHiddenJobs();
    this.scheduler = new Scheduler(this);
    this.startedAt = this.now().getTime();
  }

  now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Whether a photo of `batchId` may start spending now (see `start`). */
  spendsFor(batchId: string): boolean {
    return this.onlyBatch === null || this.onlyBatch === batchId;
  }

  get stopping(): boolean {
    return this.abort.signal.aborted;
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /**
   * Starts scheduling; items left mid-flight by a crash resume from their journal. With
   * `onlyBatch`, photos of other batches charged nothing are not started (a `run` spends on its
   * own photos only, within its own ceiling); paid jobs of any batch are still collected.
   */
  start(options: { onlyBatch?: string } = {}): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.onlyBatch = options.onlyBatch ?? null;
    this.timer = setInterval(() => this.kick(), 250);
    this.kick();
  }

  /** Stops taking work and waits for running steps to reach a safe point. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.running.values(), ...this.polling.values()]);
  }

  async close(): Promise<void> {
    await this.stop();
    // A wait still pending would read the closed database on its next tick.
    for (const end of [...this.batchWaits]) end();
    clearTimeout(this.countShown);
    this.releaseCount();
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

  createBatch(input: {
    kind: 'run' | 'folder';
    outputDir: string;
    folderId?: string | null;
    autoApprove?: boolean;
    ceiling?: number | null;
  }): string {
    const id = `batch_${randomUUID()}`;
    this.db
      .prepare(
        'INSERT INTO batches (id, folder_id, kind, output_dir, auto_approve, ceiling, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        id,
        input.folderId ?? null,
        input.kind,
        input.outputDir,
        input.autoApprove ? 1 : 0,
        input.ceiling ?? null,
        this.now().toISOString(),
      );
    return id;
  }

  /**
   * Queues one photo with a snapshot of its recipe. The same photo with the same recipe already
   * done (or on its way) is recorded as skipped, and one already paid for is collected, not paid again.
   */
  enqueue(input: EnqueueInput): ItemView {
    const { id } = enqueueItem(this.db, input, this.now());
    this.emitItem(id);
    this.kick();
    return store.itemView(store.getItem(this.db, id)!);
  }

  /** Settles an uncertain submission (UI command and `run --uncertain`). */
  resolveUncertain(id: string, action: 'resubmit' | 'fail'): boolean {
    const item = store.getItem(this.db, id);
    if (!item || !resolveUncertain(this.db, item, action, this.now())) return false;
    this.emitItem(id);
    this.kick();
    return true;
  }

  /**
   * Before a batch starts: tool prices and the ready shoot's shot count (so every photo is priced
   * before anything is spent), and the balance (so the batch's spend can be reconciled from it).
   */
  async prepareBatch(
    recipe: Recipe,
    ceiling: number | null = null,
  ): Promise<{
    perPhotoDiamonds: number | null;
    perPhotoRequests: number;
    requestsLeftToday: number | null;
    balance: number | null;
  }> {
    await this.spending.loadPrices().catch(() => undefined);
    await this.spending.loadShotCountFor(recipe).catch(() => undefined);
    // A remote service's charge can differ from its price list: its balance is the truth (the
    // embedded core charges its list price, so there a read is spent only to keep a ceiling).
    const remote = this.client.origin !== 'embedded';
    // At a closed day (the price read's 429 may have closed it) a read would be refused, and counted.
    const balance =
      (remote || ceiling !== null) && !this.dayClosed() ? await this.spending.setAnchor() : null;
    if (balance !== null) this.balanceCache = { value: balance, at: this.now().getTime() };
    const quote = this.spending.pricesKnown ? this.spending.quote(recipe) : null;
    return {
      perPhotoDiamonds: quote?.diamonds ?? null,
      perPhotoRequests: this.scheduler.perPhoto(requestJobGroup(recipe.request)),
      requestsLeftToday: this.spending.requestsLeftToday(),
      balance,
    };
  }

  /** After a batch: the balance read once more, so what was spent is what the balance says. */
  async settleSpend(): Promise<void> {
    if (!this.spending.anchored || this.running.size > 0) return;
    await this.spending.reconcile();
  }

  // ---- scheduling -----------------------------------------------------------------------------

  kick(): void {
    if (this.stopped || this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      if (this.stopped || this.paused) return;
      this.scheduler.tick();
    });
  }

  /** Runs one step of an item: holding a slot (`slot`) or as a due poll (`poll`). */
  startStep(item: store.ItemRow, kind: 'slot' | 'poll'): void {
    const map = kind === 'slot' ? this.running : this.polling;
    const run = this.step(item.id)
      .catch((err: unknown) =>
        this.options.log?.(
          `item ${item.id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
        ),
      )
      .finally(() => {
        map.delete(item.id);
        this.stepEnds.emit('ended');
        this.kick();
      });
    map.set(item.id, run);
  }

  private async step(id: string): Promise<void> {
    const item = store.getItem(this.db, id);
    if (!item || !ACTIVE_STATES.includes(item.state)) return;
    if (item.waitReason)
      store.updateItem(this.db, id, { waitReason: null, waitUntil: null }, this.now());
    // Downloads and exports send no /v1 request: their success says nothing about a daily cap.
    const asksService = item.state !== 'downloading' && item.state !== 'exporting';
    const startedAt = this.now().getTime();
    try {
      await this.runner.runStep(item);
      if (asksService) this.gates.apiSucceeded(startedAt);
    } catch (err) {
      // Only an abort the stop itself caused says nothing; a real answer that arrives while the
      // engine stops (a 402, a daily-cap 429, a failure) is recorded like any other, or the item
      // would resume as if its request were still unanswered (a refused submission as uncertain).
      if (this.causedByStop(err)) return;
      // Any answer other than 429 shows the cap is not (or no longer) in the way.
      if (asksService && err instanceof ApiError && err.status !== 0 && err.status !== 429)
        this.gates.apiSucceeded(startedAt);
      this.runner.handleError(store.getItem(this.db, id) ?? item, err);
    } finally {
      this.emitItem(id);
    }
  }

  /** An abort that came from `stop()`, not from the service or the machine. */
  private causedByStop(err: unknown): boolean {
    return (
      this.stopping &&
      (err === this.abort.signal.reason || (err instanceof Error && err.name === 'AbortError'))
    );
  }

  transition(id: string, patch: store.ItemPatch): void {
    this.db.transaction(() => store.updateItem(this.db, id, patch, this.now())).immediate();
    this.emitItem(id);
  }

  /** Shows why an item waits (with the service's words when there are any). */
  setWait(
    item: store.ItemRow,
    reason: WaitReason,
    until: Date | null,
    text: string | null = null,
  ): void {
    const untilIso = until?.toISOString() ?? null;
    // Words of the reserve's hold (`Budget.reserveWaitText`) describe that hold only: a wait
    // without words of its own clears them, so the photo never names a hold that has changed.
    const error = text ?? (isReserveWaitText(item.error) ? null : undefined);
    if (
      item.waitReason === reason &&
      item.waitUntil === untilIso &&
      (error === undefined || item.error === error)
    )
      return;
    store.updateItem(
      this.db,
      item.id,
      { waitReason: reason, waitUntil: untilIso, ...(error !== undefined ? { error } : {}) },
      this.now(),
    );
    this.setFolderWait(item, reason);
    this.emitItem(item.id);
  }

  /** Engine-wide gates (diamonds, daily cap) are also shown on the folders. */
  setFolderWait(item: store.ItemRow, reason: WaitReason): void {
    if (item.folderId && (reason === 'no_diamonds' || reason === 'daily_cap')) {
      this.db.prepare('UPDATE folders SET wait_reason = ? WHERE id = ?').run(reason, item.folderId);
    }
  }

  /** Lets items waiting for `reason` go (all of them, or one batch's or folder's). */
  clearWaits(reason: WaitReason, scope: { batchId?: string; folderId?: string } = {}): void {
    const filters: [string, string][] = [['wait_reason', reason]];
    if (scope.batchId) filters.push(['batch_id', scope.batchId]);
    if (scope.folderId) filters.push(['folder_id', scope.folderId]);
    const where = filters.map(([column]) => `${column} = ?`).join(' AND ');
    const args = filters.map(([, value]) => value);
    const rows = this.db.prepare(`SELECT id FROM items WHERE ${where}`).all(...args) as {
      id: string;
    }[];
    this.db
      .prepare(`UPDATE items SET wait_reason = NULL, wait_until = NULL WHERE ${where}`)
      .run(...args);
    if (!scope.batchId && !scope.folderId)
      this.db.prepare('UPDATE folders SET wait_reason = NULL WHERE wait_reason = ?').run(reason);
    for (const r of rows) this.emitItem(r.id);
  }

  /** Sets (or lifts, with null) a batch's diamond ceiling; items waiting on it are let through. */
  setCeiling(batchId: string, ceiling: number | null): void {
    this.db.prepare('UPDATE batches SET ceiling = ? WHERE id = ?').run(ceiling, batchId);
    this.clearWaits('ceiling', { batchId });
    this.kick();
  }

  /** The probe of a day the service's 429 closed (one balance read); the scheduler asks it. */
  probeClosedDay(): void {
    void this.spending.probeClosedDay().then(() => this.kick());
  }

  /** While short of diamonds, the balance is re-read with backoff; enough opens the gate. */
  maybeRecheckBalance(now: Date): void {
    const gate = this.gates.balanceCheckDue(now);
    if (!gate) return;
    const sentAt = this.now().getTime();
    this.client
      .getAccount()
      .then((account) => {
        if (!this.db.open) return;
        this.balanceCache = { value: account.diamondBalance, at: this.now().getTime() };
        if (this.gates.cap?.kind === 'service') this.gates.apiSucceeded(sentAt);
        this.spending.balanceSeen(account.diamondBalance, sentAt);
        this.spending.accountRead(account);
        this.diamondsSeen(account.diamondBalance, true);
      })
      .catch(() => undefined);
  }

  /**
   * Any balance read (the board's every 15 s too) that covers what a 402 asked opens its gate at
   * once: photos held short stayed held 3-5 minutes after a top-up the board already showed, the
   * gate's own re-read waiting out its growing delay (review uirev30).
   */
  private diamondsSeen(balance: number, gatesOwnRead = false): void {
    const gate = this.gates.diamonds;
    // Refused again at once after reopening on a covering balance: its own re-reads, backing
    // off, decide (the board's every 15 s kept it refused every 15 s: review rev32 D3).
    if (!gatesOwnRead && this.gates.refusedAfterReopen()) return;
    // A plan not active refusing creates whatever the balance: only a top-up opens the gate then
    // (balanceRead); the gate's re-reads go on backing off, and open it once the plan is settled.
    if (
      gate &&
      this.db.open &&
      this.gates.balanceRead(gate, balance, this.spending.planRefusing(gate.needed) !== null)
    ) {
      this.clearWaits('no_diamonds');
      this.kick();
    }
  }

  /**
   * Paid jobs an earlier run held because the service refused to show them: held by the gate, it
   * starts closed (a probe before any photo is paid for); one job held alone, one new photo goes
   * first. A new run paid for photos in the same tick as the held jobs' refused polls (review
   * rev32 D2: 12 -> 28 charged, none shown).
   */
  private resumeHiddenJobs(): void {
    const now = this.now().getTime();
    for (const item of store.itemsInStates(this.db, ['failed'])) {
      const held = HELD_BY_HIDDEN_JOBS.exec(item.error ?? '');
      if (!held || !item.error!.startsWith(RESULTS_HELD)) continue;
      if (held[1] === 'jobs') this.gates.hiddenJobs.closedBefore(Number(held[2]), held[3]!, now);
      else this.gates.hiddenJobs.suspectedBefore(item.id, Number(held[2]), held[3]!);
    }
  }

  /**
   * Whether a photo not yet paid for may be sent, as far as paid jobs hidden by the service go
   * (hidden-jobs.ts): the trial photo is "on its way" until it is done with or its poll answered.
   */
  mayStartPhoto(itemId: string): boolean {
    return this.gates.hiddenJobs.mayStart(itemId, (id) => {
      const row = store.getItem(this.db, id);
      return row !== undefined && ON_ITS_WAY.has(row.state);
    });
  }

  /**
   * While the service refuses to show paid jobs (hidden-jobs.ts), the engine alone asks: one job
   * at a time, of those waiting on the gate or held by it, least recently asked first. Answered,
   * the gate opens and the paid jobs are polled again.
   */
  probeHiddenJobs(now: Date): void {
    const hidden = this.gates.hiddenJobs;
    if (!hidden.state) return;
    const jobs = new Map(
      store
        .itemsInStates(this.db, ['processing', 'failed'])
        .filter(
          (i) =>
            i.jobId !== null &&
            !isUnnamedJob(i.jobId) &&
            (i.state === 'processing' || i.error?.startsWith(RESULTS_HELD) === true),
        )
        .map((i) => [i.id, i.jobId!]),
    );
    // Nothing of ours left to ask (their jobs ended some other way): nothing shows it closed.
    if (jobs.size === 0) {
      hidden.shown();
      this.kick();
      return;
    }
    const itemId = hidden.probeDue([...jobs.keys()], now.getTime());
    if (!itemId) return;
    this.client
      .getGeneration(jobs.get(itemId)!)
      .then(
        () => hidden.shown(),
        (err: unknown) => {
          const status = err instanceof ApiError ? err.status : 0;
          // Any other answer of the service's own (a 404: that job is gone) shows nothing is
          // gated; no answer, a 429 or a 5xx tells nothing: asked again later.
          if (status >= 400 && status < 500 && status !== 402 && status !== 403 && status !== 429) {
            hidden.shown();
            return;
          }
          const refusal = status === 402 || status === 403 ? (err as ApiError) : null;
          if (hidden.probeEnded(this.now().getTime(), refusal) && this.db.open)
            this.runner.holdHiddenJobs();
        },
      )
      .finally(() => this.kick());
  }

  // ---- prices ---------------------------------------------------------------------------------

  /** After a failed read of prices or a shot count, none is asked again before this. */
  private pricesRetryAt = 0;
  private priceFailures = 0;

  /**
   * Loads tool prices (and the shot count of an item's ready shoot) in the background, then ticks.
   * A failure is asked again after 1, 2, 4… s (at most a minute), not on every tick (4 a second).
   */
  loadPrices(item?: store.ItemRow): void {
    if (this.now().getTime() < this.pricesRetryAt) return;
    const loads: Promise<unknown>[] = [this.spending.loadPrices()];
    if (item && item.kind === 'ready_shoot') {
      const recipe = RecipeSchema.parse(JSON.parse(item.recipe));
      if (
        isReadyShootRecipe(recipe.request) &&
        !recipe.request.shotIds?.length &&
        !this.shotCountsLoading.has(recipe.request.readyTemplateSetId)
      ) {
        const id = recipe.request.readyTemplateSetId;
        this.shotCountsLoading.add(id);
        loads.push(
          this.spending
            .shotCount(id)
            .catch((err: unknown) => {
              // Waiting cannot help (an answer it cannot read, the set unknown): its photos fail
              // saying why instead of staying queued unpriced for ever.
              if (!(err instanceof ApiError && err.retryable)) this.failUnpriced(id, err);
              throw err;
            })
            .finally(() => this.shotCountsLoading.delete(id)),
        );
      }
    }
    Promise.all(loads).then(
      () => {
        this.priceFailures = 0;
        this.kick();
      },
      (err: unknown) => {
        // A 429 here closes the day or waits out the limit like any step's, so the next tick does not ask again.
        if (err instanceof ApiError && err.status === 429)
          this.gates.tooManyRequests(err, this.now());
        this.priceFailures++;
        const wait = Math.min(60_000, 1000 * 2 ** Math.min(this.priceFailures - 1, 6));
        this.pricesRetryAt = this.now().getTime() + wait;
        this.options.log?.(
          `prices: ${err instanceof Error ? err.message : String(err)}; asked again in ${wait / 1000} s`,
        );
      },
    );
  }

  /** Fails the queued photos of a ready shoot whose shot count could not be read. */
  private failUnpriced(readyShootId: string, err: unknown): void {
    if (!this.db.open) return;
    const why = err instanceof Error ? err.message : String(err);
    for (const queued of store.listItems(this.db, {
      states: ['queued'],
      limit: 1_000_000,
      offset: 0,
    }).items) {
      const request = RecipeSchema.parse(JSON.parse(queued.recipe)).request;
      if (queued.kind !== 'ready_shoot' || queued.jobId !== null) continue;
      if (!isReadyShootRecipe(request) || request.readyTemplateSetId !== readyShootId) continue;
      this.transition(queued.id, {
        state: 'failed',
        reserved: 0,
        error: `not started: the shot count of ready shoot ${readyShootId} could not be read, so its price is unknown: ${why}`,
      });
    }
  }

  /** The price of one item before it starts (null until prices and shot counts are known). */
  quoteOf(item: store.ItemRow): PriceQuote | null {
    if (!this.spending.pricesKnown) return null;
    return this.spending.quote(RecipeSchema.parse(JSON.parse(item.recipe)) as Recipe);
  }

  /** A 402 named the amount a submission needs: that is the tool's (or shot's) real price. */
  learnFrom402(item: store.ItemRow, required: number): void {
    const recipe = RecipeSchema.parse(JSON.parse(item.recipe));
    const quote = this.quoteOf(item);
    if (!quote || required <= 0) return;
    if (isReadyShootRecipe(recipe.request)) {
      const shots = quote.diamonds / this.spending.shotPrice().diamonds;
      if (shots > 0 && required % shots === 0)
        this.spending.learnPrice(SHOT_PRICE, required / shots);
    } else if (recipe.request.toolId) {
      this.spending.learnPrice(recipe.request.toolId, required);
    }
  }

  private anchoring = false;

  /** Reads the balance once before charges start, so later reads tell what they cost. */
  anchorBalance(): void {
    // After a failed read the next waits (Budget.readingDueIn); the 250 ms tick asks again.
    if (this.anchoring || this.spending.anchored || this.spending.readingDueIn > 0) return;
    this.anchoring = true;
    void this.spending.setAnchor().finally(() => {
      this.anchoring = false;
      this.kick();
    });
  }

  /** Reads the balance and attributes spend since the last read (no submission may be in flight). */
  reconcile(): void {
    // After a failed read the next waits (Budget.readingDueIn); the 250 ms tick asks again.
    if (this.stopped || this.spending.readingDueIn > 0) return;
    this.spending.reconcile().then(
      () => this.kick(),
      () => undefined,
    );
  }

  /** Tool price for estimates (fallback or learnt). */
  async toolPrice(toolId: string): Promise<number> {
    await this.spending.loadPrices();
    return this.spending.toolPrice(toolId).diamonds;
  }

  /** A remote service (job times unknown to us; the embedded core's are ours). */
  get remote(): boolean {
    return this.client.origin !== 'embedded';
  }

  /** Per tool, the one job polled on the quick schedule while no job time is known. */
  private readonly probes = new Map<string, string>();

  /** Whether the item is its tool's probe (asks only; `isProbe` appoints one). */
  probeOf(toolId: string, itemId: string): boolean {
    return this.probes.get(toolId) === itemId;
  }

  /**
   * Whether this item is (or now becomes) its tool's probe: the first job of a tool with no known
   * job time, polled early to learn it while the others wait for the prior.
   */
  isProbe(item: store.ItemRow): boolean {
    const current = this.probes.get(jobGroup(item.kind, item.toolId));
    if (current === item.id) return true;
    if (this.poller.sampleCount(jobGroup(item.kind, item.toolId)) > 0) return false;
    const holder = current ? store.getItem(this.db, current) : undefined;
    if (holder && holder.state === 'processing') return false;
    if (item.state !== 'submitting' && item.state !== 'processing') return false;
    this.probes.set(jobGroup(item.kind, item.toolId), item.id);
    return true;
  }

  /**
   * Whether requests are to be saved (fewer polls, later collection): no known cap to plan with,
   * or today's requests left are under four times what the photos on their way still need.
   */
  requestsScarce(): boolean {
    const left = this.spending.requestsLeftToday();
    if (left === null) return true;
    const need =
      (
        this.db
          .prepare(
            "SELECT COUNT(*) AS n FROM items WHERE state IN ('queued', 'uploading', 'submitting', 'processing')",
          )
          .get() as { n: number }
      ).n * 3;
    return left < need * 4;
  }

  // ---- budget and views -----------------------------------------------------------------------

  /** Whether any item is still on its way (not finished, not waiting for review). */
  hasActiveItems(): boolean {
    return store.itemsInStates(this.db, ACTIVE_STATES).length > 0;
  }

  private countShown: NodeJS.Timeout | undefined;

  /** "Requests left today" follows every request sent (polls and reads too), at most once a second. */
  private showRequestCount(): void {
    if (this.countShown) return;
    this.countShown = setTimeout(() => {
      this.countShown = undefined;
      if (this.db.open) this.events.emit('budget.changed', this.budgetView());
    }, 1000);
    this.countShown.unref();
  }

  /**
   * A charge or a refund we know of: the remembered balance follows it and the UI hears about it,
   * without an account request per job (those count against the daily cap).
   */
  balanceMoved(delta: number): void {
    if (this.balanceCache) this.balanceCache.value += delta;
    if (this.db.open) this.events.emit('budget.changed', this.budgetView());
  }

  private budgetView(): BudgetView {
    const today = this.spending.requestsToday();
    return {
      diamondBalance: this.balanceCache?.value ?? null,
      diamondBalanceReadAt: this.balanceCache ? new Date(this.balanceCache.at).toISOString() : null,
      requestsUsedToday: today.used,
      dailyCap: this.spending.dailyCap,
      requestsLeftToday: today.left,
      capInUse: today.cap,
      serviceCapNamedOn: today.serviceCapNamedOn,
      mode: this.client.origin === 'embedded' ? 'embedded' : 'remote',
    };
  }

  /** Today's requests are closed: the studio's own cap is reached, or the service's until 00:00 UTC. */
  dayClosed(): boolean {
    return (
      this.spending.ownCapReached() ||
      (this.gates.cap !== null && this.now().getTime() < this.gates.cap.until)
    );
  }

  private lastAccount: Awaited<ReturnType<ServiceClient['getAccount']>> | null = null;

  /**
   * The account, read from the service; while today's requests are closed (the studio's own cap,
   * or the service's), the last one read instead: a read then would be refused, and at the service
   * counted. So too when only the request kept for the day's closing balance read is left
   * (`Budget.reserveReached`). With none read yet, a sentence saying when it can be read.
   */
  async account(): Promise<Awaited<ReturnType<ServiceClient['getAccount']>>> {
    const reserved = this.spending.reserveReached();
    if (reserved || this.dayClosed()) {
      if (this.lastAccount) return this.lastAccount;
      throw new CommandError(
        'daily_cap',
        reserved
          ? "Only the request kept for the day's closing balance read is left, so the account cannot be read until 00:00 UTC."
          : "Today's request cap is reached, so the account cannot be read until 00:00 UTC.",
      );
    }
    this.lastAccount = await this.client.getAccount();
    this.balanceCache = { value: this.lastAccount.diamondBalance, at: this.now().getTime() };
    this.spending.accountRead(this.lastAccount);
    this.diamondsSeen(this.lastAccount.diamondBalance);
    return this.lastAccount;
  }

  /**
   * Balance (cached briefly: each read is an API request) and today's request count. At the
   * service's cap as remembered, the request left (if any) is the closing balance read's
   * (`Budget.reserveReached`), and on a closed day a read would be refused (and at the service
   * counted): the balance is then the last one read, `diamondBalanceReadAt` says when.
   */
  async budget(): Promise<BudgetView> {
    const now = this.now();
    const stale = !this.balanceCache || now.getTime() - this.balanceCache.at > 15_000;
    if (stale && !this.spending.reserveReached() && !this.dayClosed()) {
      try {
        const account = await this.client.getAccount();
        this.balanceCache = { value: account.diamondBalance, at: now.getTime() };
        this.spending.accountRead(account);
        this.diamondsSeen(account.diamondBalance);
      } catch (err) {
        // Offline or refused: show what we last knew.
        this.options.log?.(`balance: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return this.budgetView();
  }

  emitItem(id: string): void {
    const row = store.getItem(this.db, id);
    if (row) this.events.emit('item.changed', store.itemView(row));
  }

  isTerminal(state: ItemState): boolean {
    return TERMINAL_STATES.includes(state);
  }

  /** `waitForBatch` calls still waiting, each ended by `close` (rejected: the batch will not move). */
  private readonly batchWaits = new Set<() => void>();

  /**
   * Resolves when every item of the batch has reached a terminal state (or review), is uncertain,
   * or is held by one of `heldBy` (a ceiling, a closed day...), which only time or the operator
   * lifts; or when `signal` aborts (the caller stops waiting). Rejects when the engine closes.
   * Either way its timer and listeners go with it.
   */
  async waitForBatch(
    batchId: string,
    settled: readonly ItemState[] = TERMINAL_STATES,
    heldBy: readonly WaitReason[] = [],
    signal?: AbortSignal,
  ): Promise<void> {
    const done = () =>
      (
        this.db
          .prepare(
            `SELECT COUNT(*) AS n FROM items WHERE batch_id = ? AND state NOT IN (${settled.map(() => '?').join(',')}) AND uncertain = 0
             AND (wait_reason IS NULL OR wait_reason NOT IN (${heldBy.map(() => '?').join(',') || "''"}))`,
          )
          .get(batchId, ...settled, ...heldBy) as { n: number }
      ).n === 0 &&
      (heldBy.length === 0 ||
        ![...this.running.keys(), ...this.polling.keys()].some(
          (id) => store.getItem(this.db, id)?.batchId === batchId,
        ));
    if (signal?.aborted || done()) return;
    await new Promise<void>((resolve, reject) => {
      const stopWaiting = () => {
        this.events.off('item.changed', listener);
        this.stepEnds.off('ended', listener);
        signal?.removeEventListener('abort', aborted);
        clearInterval(timer);
        this.batchWaits.delete(closed);
      };
      const listener = () => {
        if (!done()) return;
        stopWaiting();
        resolve();
      };
      const aborted = () => {
        stopWaiting();
        resolve();
      };
      const closed = () => {
        stopWaiting();
        reject(new Error(`the studio closed while waiting for batch ${batchId}`));
      };
      const timer = setInterval(listener, 1000);
      this.events.on('item.changed', listener);
      this.stepEnds.on('ended', listener);
      signal?.addEventListener('abort', aborted, { once: true });
      this.batchWaits.add(closed);
    });
  }
}
