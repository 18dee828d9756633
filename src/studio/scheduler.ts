/**
 * Admission: which items may take a step now. Concurrency limits uploads, submissions, downloads
 * and exports; a job waiting for its next poll holds no slot (it is woken when due, and polls have
 * their own bound). Photos start only when their price fits the batch's ceiling (one reservation
 * per batch, written on the item, so concurrent starts can never overshoot it, with a margin until
 * a balance reading covers the charge), when today's request budget can carry them to the end, and
 * while no gate (402, daily cap, rate limit) is closed.
 */
import { isUnnamedJob } from '../client';
import { ACTIVE_STATES, jobGroup, type WaitReason } from '../shared/studio';
import {
  BALANCE_UNREAD_HOLD,
  Budget,
  REFUND_NOT_SHOWN_HOLD,
  ownCapMessage,
  planRefusalWords,
  requestsPerPhoto,
  UNCONFIRMED_PRICE_HOLD,
  WORST_RISE,
} from './budget';
import * as store from './db/store';
import type { StudioEngine } from './engine';
import { hiddenJobsNotStarted, hiddenJobsWait } from './hidden-jobs';
import { typicalPollRequests } from './poll';
import type { ToolTimes } from './poller';
import { lostBeforeResubmit } from './queue';
import { SAME_KEY_500 } from './runner';

/** A row written this far in the future means the clock went back, not a write racing the tick. */
const CLOCK_SLACK_MS = 2_000;

/** Why a photo near its ceiling waits while the balance read that would show its price fails. */
const UNREAD_NEAR_CEILING_HOLD = `${UNCONFIRMED_PRICE_HOLD}: near the ceiling, the balance read that shows what the photos before it took failed (asked again, waiting longer each time); nothing was spent on it`;

/** Why a photo waits while failed jobs' refunds the ceiling needs room from are not in the balance. */
const refundNotShownHold = (refunds: { count: number; diamonds: number }): string =>
  `${REFUND_NOT_SHOWN_HOLD} ${refunds.count} failed job(s) (${refunds.diamonds} diamond(s)) has not shown in the balance yet: their charges still count against the ceiling (spec 3.1 refunds them automatically, with no timing); nothing was spent on it, and it goes on once a balance reading shows the refund (in \`run\`: the next run)`;

/** BALANCE_UNREAD_HOLD with the service's words and what happens next. */
const balanceUnreadHold = (spending: Budget): string =>
  `${BALANCE_UNREAD_HOLD}${spending.lastReadError ? ` (${spending.lastReadError})` : ''}, so the batch's ceiling cannot be kept; nothing was spent on it`;

/**
 * A batch's ceiling: what counts against it, how much of that is safety margin, how many items are
 * admitted and not yet charged (`moving`: of those, not in doubt; a lost create's waits for the
 * operator), and what no balance reading has shown yet: unconfirmed charges since the last reading
 * and photos on their way (`unread`: their plans, `unreadPhotos`: how many).
 */
type Ceiling = {
  max: number;
  committed: number;
  margins: number;
  inFlight: number;
  moving: number;
  unread: number;
  unreadPhotos: number;
  /** Failed jobs' charges no reading has shown refunded (`Budget.refundsNotShown`), in `committed`. */
  refunds: ReturnType<Budget['refundsNotShown']>;
};

/**
 * Requests an item still needs to be delivered, by where it is: a photo not yet charged its whole
 * share, a paid job the polls its schedule expects until it is likely done. Result files are
 * fetched outside /v1 and without the key (counting-client.ts), so downloads and exports need none.
 */
function requestsStillNeeded(item: store.ItemRow, perPhoto: number, pollsLeft: number): number {
  switch (item.state) {
    case 'queued':
    case 'uploading':
      return perPhoto;
    case 'submitting':
      return perPhoto - 1;
    case 'processing':
      return pollsLeft;
    default:
      return 0;
  }
}

export class Scheduler {
  constructor(private readonly engine: StudioEngine) {}

  tick(): void {
    const engine = this.engine;
    const db = engine.db;
    const now = engine.now();
    const gates = engine.gates;
    // Today's own count at the configured cap: closed to 00:00 UTC before any step asks (the
    // client refuses such a request anyway; this keeps items from trying).
    const spending = engine.spending;
    // A request answered after the service's cap closed the day: the cap was raised.
    if (gates.takeCapRaised()) spending.capRaised();
    if (spending.ownCapReached()) gates.ownCapReached(now, ownCapMessage(spending.dailyCap!));
    // The service's cap as remembered: work stops one short of it, the last request is kept for
    // the closing balance read (once that is spent, a probe now and then finds a raised cap).
    else if (spending.reserveReached())
      gates.reserveReached(now, spending.reserveHoldText(), !spending.reserveLeft());
    const capped = gates.cap !== null;
    const capOpen = gates.capOpen(now);
    // While the day is closed, a probe lets one request through, not the whole queue. Closed by
    // the service's 429, the probe is a balance read: a photo could not send it when the cap the
    // 429 named leaves no request in today's budget (it waited for 00:00 UTC however raised).
    let probeLeft = capped && capOpen ? 1 : Infinity;
    if (capped && capOpen && gates.cap?.kind === 'service') {
      engine.probeClosedDay();
      probeLeft = 0;
    }
    const rateLimited = gates.rateLimited(now);
    // Paid jobs the service refuses to show: one asked now and then, by the engine alone.
    if (capOpen && !rateLimited) engine.probeHiddenJobs(now);
    // A short balance is re-read, but never with the request kept for the closing balance read.
    if (gates.cap?.kind !== 'reserve' || gates.cap.probing) engine.maybeRecheckBalance(now);
    // Prices are a request too: not asked while the day is closed or a rate limit runs (the
    // queued photos' own price reads below go out as the day's probe).
    if (!engine.spending.pricesKnown && gates.cap === null && !rateLimited) engine.loadPrices();
    let slots = (engine.options.concurrency ?? 4) - engine.running.size;
    let pollSlots = (engine.options.pollConcurrency ?? 16) - engine.polling.size;
    const pausedFolders = new Set(
      store
        .listFolders(db)
        .filter((f) => f.paused === 1)
        .map((f) => f.id),
    );
    const ceilings = new Map<string, Ceiling | null>();
    const active = store.itemsInStates(db, ACTIVE_STATES);
    let submitting = active.some((i) => i.state === 'submitting' && engine.running.has(i.id));
    let requestsLeft = this.requestsForNewPhotos(active, now)?.free ?? null;
    for (const item of active) {
      if (slots <= 0 && pollSlots <= 0) break;
      if (engine.running.has(item.id) || engine.polling.has(item.id)) continue;
      if (item.folderId && pausedFolders.has(item.folderId)) {
        if (item.state === 'queued') engine.setWait(item, 'paused', null);
        continue;
      }
      if (item.uncertain === 1) continue;
      // Another batch's photo charged nothing waits for a run of its own (which takes it over):
      // started here, it would spend outside this run's photos and its `--max-diamonds`. Skipped
      // before anything else, so it takes no slot (a closed day's one probe) from this run's photos.
      if (!engine.spendsFor(item.batchId) && this.uncharged(item)) continue;
      if (item.waitUntil && Date.parse(item.waitUntil) > now.getTime()) continue;
      // Result files are not /v1 requests: a paid result already done is downloaded and exported.
      const needsApi = item.state !== 'exporting' && item.state !== 'downloading';
      if (needsApi && !capOpen) {
        // The gate, not the item, knows when to try again (next UTC day, or a probe). A photo not
        // started at the remembered cap says that the day's last request is kept, and for what,
        // while it is (once spent, or under another hold, those words go: `setWait`).
        engine.setWait(
          item,
          'daily_cap',
          null,
          item.state === 'queued' && gates.cap?.kind === 'reserve' && !gates.cap.probing
            ? spending.reserveWaitText()
            : null,
        );
        continue;
      }
      if (needsApi && rateLimited) continue;
      if (needsApi && probeLeft <= 0) continue;
      if (needsApi) probeLeft--;
      if (item.state === 'processing') {
        // A wall clock stepped back since the poll was planned (the row written "later" than now)
        // would put it off by the size of the step (an hour: review rev17 C1): it is due now.
        const steppedBack = Date.parse(item.updatedAt) > now.getTime() + CLOCK_SLACK_MS;
        if (item.pollAt && Date.parse(item.pollAt) > now.getTime() && !steppedBack) continue;
        if (pollSlots <= 0) continue;
        // While the service refuses to show paid jobs, only the engine's probe asks (hidden-jobs.ts).
        const hidden = gates.hiddenJobs.state;
        if (hidden && !isUnnamedJob(item.jobId)) {
          engine.setWait(item, 'service_error', null, hiddenJobsWait(hidden));
          continue;
        }
        pollSlots--;
        engine.startStep(item, 'poll');
        continue;
      }
      if (slots <= 0) continue;
      if (item.state === 'queued' || item.state === 'uploading' || item.state === 'submitting') {
        if (!engine.mayStartPhoto(item.id)) {
          this.wait(item, 'jobs_hidden', hiddenJobsNotStarted(gates.hiddenJobs.refusal()!));
          continue;
        }
        if (gates.diamonds) {
          const plan = engine.spending.planRefusing(gates.diamonds.needed);
          this.wait(
            item,
            'no_diamonds',
            plan
              ? `${planRefusalWords(gates.diamonds.message, plan)}, and adding diamonds will not help; settle the plan with the service`
              : `short of diamonds: ${gates.diamonds.message}`,
          );
          continue;
        }
        if (item.state === 'submitting' && engine.spending.reconcilePending) continue;
        const readmit = this.reservedUncharged(item);
        if (item.state === 'queued' || readmit) {
          const quote = engine.quoteOf(item);
          if (!quote) {
            engine.loadPrices(item);
            continue;
          }
          if (requestsLeft !== null && item.reserved === 0) {
            const perPhoto = this.perPhoto(jobGroup(item.kind, item.toolId));
            if (requestsLeft < perPhoto) {
              this.wait(
                item,
                'daily_cap',
                `not started: today's request budget (${engine.spending.workingCap()} a day) cannot carry this photo to the end`,
              );
              continue;
            }
            requestsLeft -= perPhoto;
          }
          const ceiling = this.ceilingOf(item.batchId, ceilings, active);
          let planned = quote.diamonds;
          let price = planned + Budget.margin(quote);
          if (ceiling && (item.reserved === 0 || readmit)) {
            if (!engine.spending.anchored) {
              // A ceiling is kept against the balance: read it once before the first charge. While
              // that read fails (asked again, waiting longer each time), the photo is held saying
              // why, so a headless run ends with it rather than waiting on a balance that does not answer.
              engine.anchorBalance();
              if (spending.readingFailed) this.wait(item, 'ceiling', balanceUnreadHold(spending));
              continue;
            }
            // A price nothing told (listed 0 or not at all): one photo at a time until a balance
            // reading shows what it took; it is planned with that from then on.
            if (quote.unknown && (ceiling.unreadPhotos > 0 || ceiling.inFlight > 0)) {
              if (this.awaitReading(submitting, ceiling.moving) || ceiling.inFlight > 0) {
                if (spending.readingFailed) this.wait(item, 'ceiling', UNREAD_NEAR_CEILING_HOLD);
                continue;
              }
            }
            const oneOff = this.oneOffReading(item);
            // A plan from one reading far above the list (an app's debit in it, most likely)
            // would hold every ceilinged run for a day: one photo at the list and its margin
            // takes a fresh reading, when nothing of the batch is committed and that fits.
            if (
              oneOff &&
              ceiling.committed === 0 &&
              ceiling.committed + oneOff.probe <= ceiling.max &&
              ceiling.committed + price > ceiling.max
            ) {
              planned = oneOff.list;
              price = oneOff.probe;
            } else if (oneOff && ceiling.committed + price > ceiling.max) {
              // That photo charged: its reading lowers the plan (or confirms the price).
              if (this.awaitReading(submitting, ceiling.inFlight)) continue;
            }
            // A price not sure (the list's, one read once, one named, and one two readings
            // confirmed too: the service resolves it per request and may raise it after they
            // agreed, review rev13 E2) may be far off. Near the ceiling, where a rise to WORST_RISE
            // times the plan of what no reading has shown (and of this photo) could cross it, one
            // photo goes before the balance tells what it took: a rise beyond the margin crosses
            // it by one photo's rise at most, and the reading of one create shows a credit in its
            // window (below the list) where one of several creates could hide their rise behind it
            // (Budget.countAtBound). Far from it, nothing waits for a reading.
            if (
              !quote.sure &&
              ceiling.unreadPhotos > 0 &&
              ceiling.committed + price + (WORST_RISE - 1) * (ceiling.unread + planned) >
                ceiling.max &&
              this.awaitReading(submitting, ceiling.moving)
            ) {
              // The reading it waits for failed (asked again later): held, saying why, so a
              // headless run ends with it rather than waiting on a balance that does not answer.
              if (spending.readingFailed) this.wait(item, 'ceiling', UNREAD_NEAR_CEILING_HOLD);
              continue;
            }
            if (ceiling.committed + price > ceiling.max) {
              const refunds = ceiling.refunds;
              if (
                ceiling.committed - ceiling.margins - refunds.diamonds + quote.diamonds <=
                ceiling.max
              ) {
                // Only safety margins, and failed jobs' refunds no reading showed yet, are in the
                // way: the balance tells the real prices (then exact) and whether the refunds came.
                if (this.awaitReading(submitting, ceiling.inFlight)) continue;
                if (refunds.unread > 0 && !spending.readingFailed) {
                  if (!submitting) engine.reconcile();
                  continue;
                }
                // Looked for and not shown yet: read again later, or the photo waits for good.
                if (refunds.count > 0 && !submitting && spending.refundReadingDue(refunds.since))
                  engine.reconcile();
              }
              this.wait(
                item,
                'ceiling',
                refunds.count > 0 && ceiling.committed - refunds.diamonds + price <= ceiling.max
                  ? refundNotShownHold(refunds)
                  : this.unconfirmedPriceHold(item, ceiling, price),
              );
              continue;
            }
            ceiling.committed += price;
            ceiling.margins += price - planned;
            ceiling.inFlight++;
            ceiling.moving++;
            ceiling.unread += planned;
            ceiling.unreadPhotos++;
          }
          if (item.reserved === 0 || readmit)
            store.updateItem(db, item.id, { reserved: price }, now);
        }
      }
      slots--;
      // Its create goes out now: a reading asked later in this tick would race it.
      if (item.state === 'submitting') submitting = true;
      engine.startStep(item, 'slot');
    }
  }

  /**
   * Today's requests that queued photos not yet admitted may take: the working cap's (the
   * configured cap, or the service's as remembered when lower) left, less a couple kept for
   * balance reads, less what admitted items still need, collecting paid jobs first (every poll
   * each is expected to need). Null when no cap applies. One computation for admission here and
   * for `run`'s "photos that fit today" notice.
   */
  requestsForNewPhotos(
    active: store.ItemRow[] = store.itemsInStates(this.engine.db, ACTIVE_STATES),
    now: Date = this.engine.now(),
  ): { left: number; free: number; keptForPaid: number; paidJobs: number; kept: number } | null {
    const left = this.engine.spending.requestsLeftToday();
    if (left === null) return null;
    const sparse = this.engine.requestsScarce();
    const times = new Map<string, ToolTimes>();
    let kept = 0;
    let keptForPaid = 0;
    let paidJobs = 0;
    for (const i of active)
      if (i.state !== 'queued' || i.reserved > 0) {
        const need = requestsStillNeeded(
          i,
          this.perPhoto(jobGroup(i.kind, i.toolId)),
          i.state === 'processing' ? this.pollsLeft(i, now, sparse, times) : 0,
        );
        kept += need;
        if (i.state === 'processing') {
          keptForPaid += need;
          paidJobs++;
        }
      }
    return { left, free: left - 2 - kept, keptForPaid, paidJobs, kept };
  }

  /**
   * Whether the photo waits for a balance reading (one is asked for when nothing is being
   * submitted and charges are unsure): a reading pending, photos of the ceiling in flight, or
   * charges still unsure.
   */
  private awaitReading(submitting: boolean, inFlight: number): boolean {
    const spending = this.engine.spending;
    if (!submitting && spending.hasUnsureCharges()) this.engine.reconcile();
    return spending.reconcilePending || inFlight > 0 || spending.hasUnsureCharges();
  }

  /**
   * A photo with a reservation, not on its way now, charged nothing and with no create in doubt
   * (its last create, if any, was answered without a charge: a 402, a 429): it is admitted again
   * against its batch's ceiling as it stands, and counts only from then. A reservation made by an
   * earlier run (no ceiling, or an older price) then never takes a batch past its own.
   */
  private reservedUncharged(item: store.ItemRow): boolean {
    return item.reserved > 0 && (this.uncharged(item) || this.resendAfter500(item));
  }

  /**
   * Waiting to go again under its key after a 500 (spec 4.6: charged, then refunded): that charge
   * keeps its own room until a reading shows its refund (`Budget.failedCreates`), so the resend
   * is admitted again against the ceiling like a photo not sent yet. Resent at once, a
   * `--max-diamonds 4` run took 6 from the balance while the refunds were out (review rev33 D2).
   */
  private resendAfter500(item: store.ItemRow): boolean {
    return (
      item.state === 'submitting' &&
      item.diamonds === 0 &&
      item.jobId === null &&
      item.uncertain === 0 &&
      !this.engine.running.has(item.id) &&
      SAME_KEY_500.test(item.error ?? '')
    );
  }

  /** Charged nothing, not on its way now, and no create in doubt. */
  private uncharged(item: store.ItemRow): boolean {
    return (
      item.diamonds === 0 &&
      item.jobId === null &&
      item.uncertain === 0 &&
      !this.engine.running.has(item.id) &&
      (item.state === 'queued' ||
        item.state === 'uploading' ||
        (item.state === 'submitting' && item.submittedAt === null))
    );
  }

  private wait(item: store.ItemRow, reason: WaitReason, text: string | null): void {
    this.engine.setWait(item, reason, null, text);
  }

  /** Polls a paid job is expected to need from now until it is seen done. */
  private pollsLeft(
    item: store.ItemRow,
    now: Date,
    sparse: boolean,
    times: Map<string, ToolTimes>,
  ): number {
    const poller = this.engine.poller;
    const group = jobGroup(item.kind, item.toolId);
    let tool = times.get(group);
    if (!tool) times.set(group, (tool = poller.timesOf(group, this.engine.remote)));
    const nowMs = now.getTime();
    return poller.pollsLeft(
      tool,
      {
        submittedAtMs: item.submittedAt ? Date.parse(item.submittedAt) : nowMs,
        nextPollAtMs: item.pollAt ? Date.parse(item.pollAt) : nowMs,
        nowMs,
      },
      sparse,
    );
  }

  /** Upload, create and the polls a job usually needs (one when the first poll is well aimed). */
  perPhoto(group: string): number {
    return requestsPerPhoto(typicalPollRequests(group) - 1);
  }

  /**
   * The price of a photo planned from one unconfirmed balance reading above twice the list (or
   * null): `probe` is the list and its margin, what one photo taking a fresh reading is admitted at.
   */
  private oneOffReading(item: store.ItemRow): { list: number; probe: number } | null {
    if (item.kind === 'ready_shoot') return null;
    const group = jobGroup(item.kind, item.toolId);
    const spending = this.engine.spending;
    const quote = spending.toolPrice(group);
    const read = spending.readPrice(group);
    const list = spending.listPrice(group);
    if (quote.sure || !read || read.confirmed || !(list > 0) || read.diamonds <= 2 * list)
      return null;
    return { list, probe: list + Budget.margin({ diamonds: list, sure: false }) };
  }

  /**
   * Why a photo waits at a ceiling that nothing of the batch counts against yet, when what keeps
   * it out is a price read once from the balance above the list (an app's debit may be in it):
   * the words say so, not "the ceiling is reached" (null otherwise: the plain ceiling hold).
   */
  private unconfirmedPriceHold(
    item: store.ItemRow,
    ceiling: Ceiling,
    price: number,
  ): string | null {
    if (ceiling.committed > 0 || item.kind === 'ready_shoot') return null;
    const group = jobGroup(item.kind, item.toolId);
    const spending = this.engine.spending;
    const read = spending.readPrice(group);
    const list = spending.listPrice(group);
    if (!read || read.confirmed || read.diamonds <= list) return null;
    return `${UNCONFIRMED_PRICE_HOLD} (${read.diamonds} diamond(s) from one balance reading, list ${list}): with its margin a photo needs ${price}, above the ceiling of ${ceiling.max}; nothing was spent. A reading at the list price, or a day, lifts it`;
  }

  /**
   * A batch's diamond ceiling and what counts against it: what its items were charged, a margin
   * on charges no balance reading has confirmed, and the reservations of items admitted but not yet
   * charged, each at least at today's plan and its margin (a reading that showed a rise reprices
   * the photos already on their way: they will be charged the new price). Once per tick and batch.
   */
  private ceilingOf(
    batchId: string,
    cache: Map<string, Ceiling | null>,
    active: store.ItemRow[],
  ): Ceiling | null {
    if (!cache.has(batchId)) {
      const batch = store.getBatch(this.engine.db, batchId);
      if (!batch || batch.ceiling === null) cache.set(batchId, null);
      else {
        // A charge counted above its price is at its bound already (`Budget.countAtBound`). A
        // job an earlier run paid for and this batch took over (queue.ts `enqueue`: a rerun after
        // a restart or a give-up) is collected for nothing: its charge is that run's, not this
        // batch's (review rev13 E4), as in `run`'s diamondsSpent; it keeps counting in the batch
        // that paid it (paid_batch_id, review rev19 F2).
        const row = this.engine.db
          .prepare(
            `SELECT COALESCE(SUM(diamonds), 0) AS charged,
               COALESCE(SUM(CASE WHEN diamonds > 0 AND price_sure = 0 AND NOT (price > 0 AND diamonds > price) THEN MAX(1, (diamonds + 3) / 4) ELSE 0 END), 0) AS chargeMargins
             FROM items WHERE ${store.CHARGED_TO_BATCH}`,
          )
          .get(batchId, batchId, batchId) as { charged: number; chargeMargins: number };
        // A catalog job's diamondCost is a claim until a balance reading shows it: its charge is
        // counted at least at today's plan of its shots, with the margin.
        const readSince = this.engine.spending.readSince;
        const shot = this.engine.spending.shotPrice();
        const claims =
          readSince === null
            ? []
            : (this.engine.db
                .prepare(
                  `SELECT diamonds, pack_total AS packTotal, submit_request AS submitRequest FROM items
                   WHERE ${store.CHARGED_TO_BATCH} AND kind = 'ready_shoot' AND diamonds > 0 AND price_sure = 1 AND submitted_at >= ?`,
                )
                .all(batchId, batchId, batchId, readSince) as {
                diamonds: number;
                packTotal: number | null;
                submitRequest: string | null;
              }[]);
        for (const c of claims) {
          const planned = Math.max(c.diamonds, Budget.shotsOf(c) * shot.diamonds);
          row.chargeMargins +=
            planned + Budget.margin({ diamonds: planned, sure: false }) - c.diamonds;
        }
        // Reservations carry their own margin; they are counted whole until the charge replaces them.
        const onTheirWay = active.filter(
          (i) =>
            i.batchId === batchId &&
            i.diamonds === 0 &&
            i.jobId === null &&
            i.reserved > 0 &&
            (i.state === 'queued' || i.state === 'uploading' || i.state === 'submitting') &&
            !this.reservedUncharged(i),
        );
        let reserved = 0;
        const charges = this.engine.spending.unreadCharges(batchId);
        let unread = charges.diamonds;
        let moving = 0;
        for (const i of onTheirWay) {
          const quote = this.engine.quoteOf(i);
          reserved += Math.max(i.reserved, quote ? quote.diamonds + Budget.margin(quote) : 0);
          if (i.uncertain === 1) continue;
          unread += quote?.diamonds ?? i.reserved;
          moving++;
        }
        // A lost create sent again under a new key may have been charged too (review rev17 U1).
        const lost = lostBeforeResubmit(
          this.engine.db,
          batchId,
          (i) => i.price || this.engine.quoteOf(i)?.diamonds || 0,
        );
        // A failed job's refund may come late (spec 3.1: no timing) or never: its charge keeps
        // its room until a reading shows the balance back up by it (review rev16 A1b).
        const refunds = this.engine.spending.refundsNotShown(batchId);
        cache.set(batchId, {
          max: batch.ceiling,
          committed: row.charged + row.chargeMargins + reserved + lost + refunds.diamonds,
          refunds,
          margins: row.chargeMargins,
          inFlight: onTheirWay.length,
          moving,
          unread,
          unreadPhotos: charges.count + moving,
        });
      }
    }
    return cache.get(batchId) ?? null;
  }
}
