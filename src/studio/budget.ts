/**
 * What the studio may spend: requests per key and UTC day against the daily cap (the API does
 * not report it, so it is configured: `--daily-cap`, default 500), and diamonds: the price of
 * every item before it starts, one reservation per batch ceiling that concurrent starts are
 * admitted against, and spend reconciled from the balance (the charged price can differ from
 * `fallbackPriceDiamonds` and is reported nowhere).
 */
import { createHash } from 'node:crypto';
import { ApiError, type ServiceClient } from '../client';
import {
  isReadyShootRecipe,
  jobGroup,
  requestJobGroup,
  type Recipe,
  type RecipeKind,
} from '../shared/studio';
import { utcDay } from '../shared/utc-day';
import type { StudioDB } from './db/open';
import { isDailyCapRefusal, namesShortPeriod } from './gates';
import * as store from './db/store';
import { shotsAsked } from './result-download';

/** Plan statuses (spec 2.9) under which a service may refuse creates whatever the balance. */
const INACTIVE_PLANS = new Set(['paused', 'billing_issue', 'expired', 'refunded']);

/**
 * A photo held by a 402 that the account's plan causes, in the engine's words (the studio's wait,
 * `run`'s held list; the board reads the plan out of them: progress.ts PLAN_HOLDS).
 */
export const planRefusalWords = (message: string, plan: string): string =>
  `refused 402 (${message}) while the balance covers it: the account's plan is ${plan}`;
export { DEFAULT_DAILY_CAP } from '../shared/studio-settings';

/** The words of a request refused by the studio's own count (read as a daily cap, like the service's 429). */
export function ownCapMessage(cap: number): string {
  return `Daily request cap of ${cap} reached (counted by this studio against the daily cap in Settings or --daily-cap); it reopens at 00:00 UTC`;
}

/** What the last request of a day at the service's cap as remembered is kept for. */
export const RESERVE_KEPT = "kept for the day's closing balance read";

/** Words `Budget.reserveWaitText` wrote on a photo: they describe that hold only, and go with it. */
export function isReserveWaitText(text: string | null): boolean {
  return text !== null && text.includes(RESERVE_KEPT);
}

/** Identifies a key without storing it: origin plus a short hash of the key. */
export function budgetKey(origin: string, apiKey?: string): string {
  return apiKey
    ? `${origin}#${createHash('sha256').update(apiKey).digest('hex').slice(0, 12)}`
    : origin;
}

/** Requests one photo costs: upload, create, and the polls it usually needs (at least one). */
export function requestsPerPhoto(expectedPolls: number): number {
  return 2 + Math.max(1, expectedPolls);
}

/** Today's requests per key: used, the cap in use and what is left of it (`Budget.requestsToday`). */
export type RequestsToday = {
  used: number;
  cap: number | null;
  left: number | null;
  serviceCapNamedOn: string | null;
};

/**
 * `unknown`: the list gives no price for the tool (0 or left out) and no reading or 402 has told
 * it: `diamonds` is a stand-in of 1 so its charges are counted and read, not a price.
 */
export type PriceQuote = { diamonds: number; sure: boolean; unknown?: boolean };

/** How a photo held by a price read once from the balance (not by spending) is told. */
export const UNCONFIRMED_PRICE_HOLD = 'not started: the price is unconfirmed';
/** Why a photo under a ceiling waits while failed jobs' refunds are not in the balance (`refundsNotShown`). */
export const REFUND_NOT_SHOWN_HOLD = 'not started: the refund of';
/** Why a photo under a ceiling waits while the balance it is kept against cannot be read. */
export const BALANCE_UNREAD_HOLD = 'not started: the balance cannot be read';

/** How long a price read once from the balance (not confirmed by a second reading) is planned with. */
export const READING_KEPT_MS = 24 * 60 * 60_000;

/**
 * How long a price the service named (a 402's required amount, a catalog job's `diamondCost`) is
 * planned with, within the batch that named it, over an older reading. It is the amount at that
 * moment (spec §2.1: resolved per request), not the price for good: like a confirmed reading it
 * keeps its margin until a balance reading covers the charge (a rise, or a top-up hiding one, may
 * come before that reading).
 */
export const NAMED_SURE_MS = 15 * 60_000;

/**
 * How many times its plan a charge may cost before a balance reading shows it (the spec promises a
 * slight difference; a demanding ceiling holds beyond it), at a price two readings confirmed too
 * (resolved per request: it may rise after they agreed): where a rise up to this could cross a
 * ceiling, one round of photos goes before a reading (`Scheduler`), so a rise beyond the margin
 * crosses it by that round's at most.
 */
export const WORST_RISE = 3;

/**
 * Reads again of a reading that showed less than its charges' list prices (lag or a credit), the
 * first after `Budget.lagRecheckMs`, each wait doubled: 5, 10, 20 and 40 s by default.
 */
const LAG_RECHECKS = 4;

/**
 * How long a failed job's refund that no reading showed yet is waited for (`Budget.refundsDue`):
 * the spec refunds failed jobs automatically, with no timing; one later than this is taken for a
 * credit, as before.
 */
export const REFUND_DUE_KEPT_MS = 15 * 60_000;

/** A failed job's refund a reading did not show yet: its charge, and when it was first waited for. */
export type RefundDue = { id: string; diamonds: number; since: number };
/** A create answered 500 (charged, then refunded per spec 4.6): `id` is the item's and its send's. */
type FailedCharge = { id: string; batchId: string; diamonds: number; submittedAt: string };

/** The wait before a reading asked again after its balance read failed; doubled per failure. */
const READING_RETRY_MS = 1_000;
const READING_RETRY_MAX_MS = 30_000;

/** The learnt price of one shot of a ready shoot (next to those of job groups, `jobGroup`). */
export const SHOT_PRICE = 'ready_shoot_shot';

export class Budget {
  private readonly toolPrices = new Map<string, number>();
  private pricesLoading: Promise<void> | null = null;
  private readonly shotCounts = new Map<string, number>();
  /** Balance read before the charges since then; the difference is what those charges cost. */
  private anchor: { balance: number; at: number } | null = null;
  private reconciling: Promise<void> | null = null;
  /** When this batch started (`setAnchor`; until then, when this budget was opened). */
  private batchStartedAt: number;

  constructor(
    private readonly db: StudioDB,
    private readonly client: ServiceClient,
    readonly key: string,
    readonly dailyCap: number | null,
    private readonly now: () => Date,
    /** A 429 to a read of its own (prices, balance): the gates close the day or wait, as for any step's. */
    private readonly onRefused: (err: ApiError) => void = () => undefined,
    /** A read of its own answered (sent at `sentAt`, ms): a day the service's 429 closed reopens, as for any step's. */
    private readonly onAnswered: (sentAt: number) => void = () => undefined,
  ) {
    this.batchStartedAt = now().getTime();
    this.openedAt = this.batchStartedAt;
  }

  /** When this budget was opened (ms): failed jobs charged since are looked for in readings (`lookForRefunds`). */
  private readonly openedAt: number;

  /**
   * A daily-cap 429 of the service that names its number ("Daily request cap of 200 reached"): it
   * is remembered per key (the studio's own store) as the working guess for the days after, never
   * above the configured cap (`workingCap`). A later 429 naming another number replaces it; a
   * refusal of the studio's own count (`ownCapMessage`, nothing sent) is not the service's.
   */
  learnCap(message: string): void {
    // A number per second or minute is no day's cap, whatever closed the day.
    if (/counted by this studio/.test(message) || namesShortPeriod(message)) return;
    const m = /(?:cap|limit|quota)\D{0,20}?(\d+)|(\d+)\s*(?:requests?\s*)?(?:a|per)\s*day/i.exec(
      message,
    );
    const cap = Number(m?.[1] ?? m?.[2]);
    if (cap > 0) store.setSetting(this.db, `cap:${this.key}`, `${this.day()}:${cap}`);
  }

  /**
   * The service's daily cap as its last daily-cap 429 named it, on any day (the API reports it
   * nowhere else), or null: never named, or since shown to be raised (`capRaised`).
   */
  serviceCap(): number | null {
    return this.namedCap()?.cap ?? null;
  }

  /** The remembered cap with the UTC day its 429 last named it (stored as `day:cap`). */
  private namedCap(): { cap: number; day: string } | null {
    const [day, named] = (store.getSetting(this.db, `cap:${this.key}`) ?? '').split(':');
    const cap = Number(named);
    return cap > 0 && day ? { cap, day } : null;
  }

  /**
   * Evidence that the service's cap is above the one remembered: a request it answered as today's
   * `nth` by our count (other users of the key add to the service's count, never to ours), or a
   * probe let through a closed day and answered. The remembered cap is dropped (the configured one
   * plans again) until a 429 names the new one. Returns whether it was. A request lost before it
   * reached the service counts here only, so a raise can be seen where there was none: that costs
   * one day planned with the configured cap, whose 429 names the cap again.
   */
  capRaised(nth?: number): boolean {
    const cap = this.serviceCap();
    if (cap === null || (nth !== undefined && nth <= cap)) return false;
    store.setSetting(this.db, `cap:${this.key}`, `${this.day()}:0:raised above ${nth ?? cap}`);
    return true;
  }

  /** The cap today's work plans with: the configured one, or the service's as remembered when lower. */
  workingCap(): number | null {
    const caps = [this.dailyCap, this.serviceCap()].filter(
      (c): c is number => typeof c === 'number' && c > 0,
    );
    return caps.length ? Math.min(...caps) : null;
  }

  /**
   * Today's requests against the cap in use (`workingCap`): the one computation that everything
   * showing or planning with today's requests reads (the board, the account screen, a recipe's
   * estimate, admission, `run`'s notice). `serviceCapNamedOn`: set when the cap in use is the
   * service's as its 429 named it (below the configured one), the UTC day it was last named.
   */
  requestsToday(): RequestsToday {
    const used = this.requestsUsedToday();
    const cap = this.workingCap();
    const named = this.namedCap();
    return {
      used,
      cap,
      left: cap === null ? null : Math.max(0, cap - used),
      serviceCapNamedOn:
        named !== null && named.cap === cap && (this.dailyCap === null || named.cap < this.dailyCap)
          ? named.day
          : null,
    };
  }

  /** Requests left today against the cap in use (`requestsToday`); null: no cap. */
  requestsLeftToday(): number | null {
    return this.requestsToday().left;
  }

  /**
   * The remembered service cap when it is the one that binds (not above the configured one): the
   * last request of its day is kept for the closing balance read, so that the day's spend is
   * confirmed from the balance. Null on the first day (the cap is not known before its 429).
   */
  reserveCap(): number | null {
    const cap = this.serviceCap();
    return cap !== null && (this.dailyCap === null || cap <= this.dailyCap) ? cap : null;
  }

  /**
   * Why work stopped one request short of the service's cap as remembered (`reserveReached`): the
   * cap, when its 429 named it, and the one request kept for the closing balance read. The one
   * wording of that hold: the gate's message (`run`'s closing notice) and `reserveWaitText`.
   */
  reserveHoldText(): string {
    const named = this.namedCap();
    return `the service's daily cap of ${this.reserveCap()}${named ? ` (learned ${named.day})` : ''} is reached but for one request, ${RESERVE_KEPT}`;
  }

  /** Why a photo not started waits at the remembered cap, read after "not started: " and on the board. */
  reserveWaitText(): string {
    return `${this.reserveHoldText()}; resumes at 00:00 UTC`;
  }

  /** Work has taken all of today's requests but the one kept for the closing balance read. */
  reserveReached(): boolean {
    const cap = this.reserveCap();
    return cap !== null && this.requestsUsedToday() >= cap - 1;
  }

  /** The request kept for the closing balance read is still there (today's count is under the cap). */
  reserveLeft(): boolean {
    const cap = this.reserveCap();
    return cap !== null && this.requestsUsedToday() < cap;
  }

  // ---- requests ------------------------------------------------------------------------------

  private day(): string {
    return utcDay(this.now());
  }

  countRequest(): void {
    store.countRequest(this.db, this.key, this.day());
  }

  /**
   * Counts a request about to go out, or refuses it when today's count has reached the configured
   * cap: the (cap+1)th request of a UTC day is never sent. The refusal is the spec's daily-cap 429
   * (nothing sent), so every caller treats it exactly as the service's own.
   */
  takeRequest(): void {
    if (this.ownCapReached())
      throw new ApiError(429, ownCapMessage(this.dailyCap!), { notSent: true });
    this.countRequest();
  }

  /**
   * A counted request that certainly never left (connection refused, host unknown): the service
   * cannot have counted it, so it does not use the day's budget. One that may have arrived stays.
   */
  giveBackRequest(): void {
    store.uncountRequest(this.db, this.key, this.day());
  }

  /** Whether this studio has sent today all the requests its configured cap allows. */
  ownCapReached(): boolean {
    return this.dailyCap !== null && this.requestsUsedToday() >= this.dailyCap;
  }

  requestsUsedToday(): number {
    return store.requestsOn(this.db, this.key, this.day());
  }

  // ---- prices --------------------------------------------------------------------------------

  /** Loads tool prices once (concurrent callers share the one request). */
  loadPrices(): Promise<void> {
    if (this.toolPrices.size > 0) return Promise.resolve();
    const sentAt = this.now().getTime();
    this.pricesLoading ??= this.client
      .listModels()
      .then((models) => {
        // A price of 0 or none (spec §2.9: approximate) is not known, not free: kept as 0. A
        // fraction plans at the whole diamond above: reservations are whole diamonds (3.5 crashed
        // every run at its first reservation, review rev17 P1).
        for (const m of models) {
          const listed = Number(m.fallbackPriceDiamonds);
          this.toolPrices.set(m.id, Number.isFinite(listed) && listed > 0 ? Math.ceil(listed) : 0);
        }
        this.onAnswered(sentAt);
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 429 && !err.notSent) {
          // A daily-cap 429 naming its number is remembered, as a balance read's or a step's is.
          if (this.dailyCapRefusal(err) && this.db.open) this.learnCap(err.message);
          this.onRefused(err);
        }
        throw err;
      })
      .finally(() => {
        this.pricesLoading = null;
      });
    return this.pricesLoading;
  }

  get pricesKnown(): boolean {
    return this.toolPrices.size > 0;
  }

  /**
   * The price we believe a job group (a tool, or looks) is charged at, and whether it is sure (a
   * ceiling keeps no margin for it). Sure only on the embedded core (it charges its list). A price
   * the service named in this batch (a 402's required amount: `learnPrice`, `NAMED_SURE_MS`) is
   * planned with its margin, like a confirmed reading; one named before plans like one read from
   * the balance. Otherwise the price read
   * from the shared balance (`learnPriceFromBalance`) is planned with, never below the list, and a
   * photo starting at it keeps its margin even once readings agreed on it: the price is resolved
   * per request (spec §2) and may rise before the charge; a reading that covers the charge drops
   * the margin (`reconcile`).
   */
  toolPrice(group: string): PriceQuote {
    const list = this.toolPrices.get(group) ?? 0;
    if (this.client.origin === 'embedded' && list > 0) return { diamonds: list, sure: true };
    const named = this.namedPrice(group);
    if (named !== null) return { diamonds: named, sure: false };
    const read = this.readPrice(group);
    const diamonds = Math.max(list, read?.diamonds ?? 0);
    // No price anywhere: a ceiling admits one photo at a time until a reading shows it (Scheduler).
    if (!(diamonds > 0)) return { diamonds: 1, sure: false, unknown: true };
    return { diamonds, sure: false };
  }

  /**
   * A ready shoot's shot, never sure on a remote service: a job's diamondCost is the service's
   * claim (spec §4.10 names the field, not its meaning; §2.1 lets the price move per request), so
   * the shot price read from the balance (`doReconcile`) wins when dearer, and a claim no reading
   * has shown plans no lower than the dearest image tool (the guess before any claim).
   */
  shotPrice(): PriceQuote {
    const named =
      Number((store.getSetting(this.db, `price:${this.key}:${SHOT_PRICE}`) ?? '').split(' ')[0]) ||
      0;
    if (this.client.origin === 'embedded' && named > 0) return { diamonds: named, sure: true };
    const read = this.readPrice(SHOT_PRICE)?.diamonds ?? 0;
    const image = ['virtual_model', 'outfit_photo', 'pro_studio', 'jewelry_on_model'].map(
      (t) => this.toolPrices.get(t) ?? 0,
    );
    const diamonds = read > 0 ? Math.max(read, named) : Math.max(1, named, ...image);
    return { diamonds, sure: false };
  }

  /** A price the service named (a 402's required amount, a ready shoot's diamondCost), dated. */
  learnPrice(group: string, diamonds: number): void {
    if (diamonds > 0 && Number.isFinite(diamonds))
      store.setSetting(
        this.db,
        `price:${this.key}:${group}`,
        `${Math.round(diamonds)} named ${this.now().getTime()}`,
      );
  }

  /** Whether a price named at `at` (ms) is still sure: named in this batch, within `NAMED_SURE_MS`. */
  private namedLately(at: number): boolean {
    return at >= this.batchStartedAt && this.now().getTime() - at < NAMED_SURE_MS;
  }

  /**
   * The price the service named for a group in this batch (stored `N named at`), or null. One
   * named before (or undated) is planned like a confirmed reading (moved to `price-seen` unless a
   * later reading is there): with its margin until a reading covers its charges. An unmarked `N`
   * was stored by a version that also kept balance readings there: it counts as one unconfirmed
   * reading (dated now).
   */
  private namedPrice(group: string): number | null {
    const key = `price:${this.key}:${group}`;
    const [value, mark, at] = (store.getSetting(this.db, key) ?? '').split(' ');
    const diamonds = Number(value);
    if (!(diamonds > 0)) return null;
    if (mark === 'named' && this.namedLately(Number(at))) return diamonds;
    store.setSetting(this.db, key, '');
    const namedAt = Number(at) || this.now().getTime();
    const read = this.storedReading(group);
    if (mark === 'named' ? !read || read.at <= namedAt : this.readPrice(group) === null)
      this.storeReading(group, diamonds, mark === 'named', mark === 'named' ? namedAt : undefined);
    return null;
  }

  /**
   * A price read from the shared balance (spec §1 rule 2: the service's own apps spend and credit
   * it too), so one reading can be a credit masking a surcharge (read low) or an app's debit (read
   * high). The latest reading is planned with (never below the list), with its margin: a dearer
   * one raises the plan at once (a named price below it is put in doubt), a cheaper one lowers it
   * (an app's debit read once does not stop ceilinged runs). Confirmed when it equals the one
   * before (another window); an unconfirmed reading is forgotten after a day (`READING_KEPT_MS`).
   * Returns whether this reading confirmed the price (at or above the list): it agrees with the
   * one before, or with the price the service named in this batch.
   */
  private learnPriceFromBalance(group: string, diamonds: number): boolean {
    const named = this.namedPrice(group);
    // Below a named price: a credit may hide part of the charges; the named price stands.
    if (named !== null && diamonds <= named) return diamonds === named;
    if (named !== null) store.setSetting(this.db, `price:${this.key}:${group}`, '');
    const confirmed = this.readPrice(group)?.diamonds === diamonds;
    this.storeReading(group, diamonds, confirmed);
    return confirmed && diamonds >= this.listPrice(group);
  }

  /**
   * A shot's price read from the balance: what each of a reading's ready shoots took, over its
   * shots, when they all had as many. A dearer one raises `shotPrice` at once (over a lower
   * diamondCost); confirmed when it equals the reading before.
   */
  private learnShotPriceFromBalance(
    charges: { packTotal: number | null; submitRequest: string | null }[],
    each: number,
  ): void {
    const shots = Budget.shotsOf(charges[0]!);
    if (!(shots > 0) || each % shots !== 0 || charges.some((c) => Budget.shotsOf(c) !== shots))
      return;
    const shot = each / shots;
    this.storeReading(SHOT_PRICE, shot, this.readPrice(SHOT_PRICE)?.diamonds === shot);
  }

  /** Shots a ready shoot's create asked for (its shotIds), else its packTotal (0: not known). */
  static shotsOf(c: { packTotal: number | null; submitRequest: string | null }): number {
    return shotsAsked(c) || (c.packTotal ?? 0);
  }

  /**
   * Charges whose reading showed less than their list prices: a credit (a top-up, a refund) hid
   * them whole, and with them any rise among them (spec §2.1: resolved per request), so no reading
   * tells what they took. Each is counted at the worst rise the ceiling plans for (`WORST_RISE`
   * times its plan; a catalog claim: today's plan of its shots), so neither the ceiling nor the
   * summary takes them for less than a rise up to that took; its price stays the plan, and a
   * charge counted above its price keeps no further margin (scheduler's `ceilingOf`). A later
   * reading of the same tool settles them (`settleHidden`).
   */
  private countAtBound(
    charged: {
      id: string;
      kind: RecipeKind;
      toolId: string | null;
      packTotal: number | null;
      submitRequest: string | null;
      diamonds: number;
      price: number;
      sure: number;
    }[],
    outside = false,
  ): number {
    if (this.client.origin === 'embedded') return 0;
    const shot = this.shotPrice().diamonds;
    const update = this.db.prepare(
      'UPDATE items SET diamonds = ?, price = ?, price_sure = 0 WHERE id = ?',
    );
    let counted = 0;
    this.db.transaction(() => {
      for (const c of charged) {
        const claim = c.kind === 'ready_shoot';
        if ((c.sure === 1 && !claim) || (c.price > 0 && c.diamonds > c.price)) {
          counted += c.diamonds;
          continue;
        }
        const planned = claim ? Math.max(c.diamonds, Budget.shotsOf(c) * shot) : c.diamonds;
        const bound = Math.max(
          planned + Budget.margin({ diamonds: planned, sure: false }),
          WORST_RISE * planned,
        );
        counted += bound;
        update.run(bound, planned, c.id);
        if (!claim)
          this.hiddenByCredit.push({
            id: c.id,
            group: jobGroup(c.kind, c.toolId),
            planned,
            bound,
            outside,
          });
      }
    })();
    return counted;
  }

  /** The most a charge can have taken (what `countAtBound` counts it at). */
  private boundOf(c: {
    kind: RecipeKind;
    packTotal: number | null;
    submitRequest: string | null;
    diamonds: number;
    price: number;
    sure: number;
  }): number {
    const claim = c.kind === 'ready_shoot';
    if ((c.sure === 1 && !claim) || (c.price > 0 && c.diamonds > c.price)) return c.diamonds;
    const planned = claim
      ? Math.max(c.diamonds, Budget.shotsOf(c) * this.shotPrice().diamonds)
      : c.diamonds;
    return Math.max(
      planned + Budget.margin({ diamonds: planned, sure: false }),
      WORST_RISE * planned,
    );
  }

  /** Charges a credit hid (`countAtBound`), counted at their bound until a reading of their tool settles them. */
  private hiddenByCredit: {
    id: string;
    group: string;
    planned: number;
    bound: number;
    /** Counted at its bound because spend outside the run was in its reading (`spentOutside`). */
    outside?: boolean;
  }[] = [];

  /**
   * Diamonds the readings of this batch showed leaving the balance beyond what their charges could
   * take (WORST_RISE times their plan): the owner spending in the service's own apps (spec §1
   * rule 2). Not this run's spend, and not counted against its ceiling; a charge of such a reading
   * is counted at its bound until a later reading shows its price, and what it then counts less
   * is added here.
   */
  spentOutside = 0;

  /** Tools whose last reading dropped beyond what their charges could take (`spentOutside`). */
  private beyondBound = new Set<string>();

  /** Of the charges counted at their bound for spend outside the run, what no later reading settled beyond their plan. */
  get outsideUnsettled(): number {
    return this.hiddenByCredit
      .filter((h) => h.outside)
      .reduce((sum, h) => sum + h.bound - h.planned, 0);
  }

  /**
   * Charges a reading attributed a price no reading before agreed with (`read`): a credit in
   * their window may have hidden a rise among them to the very diamond (it then reads as the
   * list). Until the next reading of their tool tells whether the price rose, the ceiling plans
   * them as charges no reading has shown (`unreadCharges`: near it, one photo at a time).
   */
  private doubtful: { id: string; group: string; read: number }[] = [];

  /**
   * A reading that told what each of its charges of `group` took (`each`: one tool, the
   * difference divided evenly, no less than the list) settles the earlier charges of that tool it
   * does not hold (`readNow`). A credit hid them whole (`countAtBound`): the price held (each at
   * their plan), they count their plan; risen, the new price (the rise may have begun among
   * them: never less than was taken), within their bound (a reading above it is more likely an
   * app's debit: `plannedFloor`). Read once at a price (`doubtful`): at or below it, their reading
   * stands; above it, the rise may have begun among them and a credit hidden it: they count the
   * new price (at most WORST_RISE times their reading). Their margin stays (price_sure 0).
   */
  private settleEarlier(group: string, each: number, readNow: Set<string>): void {
    const mine = (h: { id: string; group: string }) => h.group === group && !readNow.has(h.id);
    const update = this.db.prepare(
      'UPDATE items SET diamonds = ?, price = ?, price_sure = 0 WHERE id = ? AND diamonds > 0',
    );
    const raise = this.db.prepare(
      'UPDATE items SET diamonds = MAX(diamonds, ?), price = MAX(price, ?), price_sure = 0 WHERE id = ? AND diamonds > 0',
    );
    for (const h of this.hiddenByCredit.filter(mine)) {
      // Beyond its bound only when the rise showed twice (`beyondBound`): what was told apart
      // as spent outside the run was this charge's.
      const counted =
        h.outside && each > h.bound ? each : Math.min(h.bound, Math.max(h.planned, each));
      update.run(counted, counted, h.id);
      if (h.outside) this.spentOutside = Math.max(0, this.spentOutside + h.bound - counted);
    }
    for (const d of this.doubtful.filter(mine))
      if (each > d.read) {
        const counted = Math.min(each, WORST_RISE * d.read);
        raise.run(counted, counted, d.id);
      }
    this.hiddenByCredit = this.hiddenByCredit.filter((h) => !mine(h));
    this.doubtful = this.doubtful.filter((d) => !mine(d));
  }

  /** When the balance was last read (ISO; '' before any; null: embedded): a catalog charge since is not yet shown by one. */
  get readSince(): string | null {
    if (this.client.origin === 'embedded') return null; // the embedded core charges its list
    return this.anchor ? new Date(this.anchor.at).toISOString() : '';
  }

  /**
   * The least a charge planned at `planned` is attributed when a reading shows less: its plan, but
   * a plan above twice the list (or named price) from a reading never confirmed was most likely an
   * app's debit in that one reading: then the list (the summary must not claim spend that never
   * happened; a charge is still never counted below the list).
   */
  private plannedFloor(
    group: string,
    planned: number,
    prior: { confirmed: boolean } | null,
  ): number {
    const base = Math.max(this.listPrice(group), this.namedPrice(group) ?? 0);
    return base > 0 && planned > 2 * base && !prior?.confirmed ? base : planned;
  }

  private storeReading(
    group: string,
    diamonds: number,
    confirmed: boolean,
    at = this.now().getTime(),
  ): void {
    store.setSetting(
      this.db,
      `price-seen:${this.key}:${group}`,
      `${diamonds} ${at} ${confirmed ? 'confirmed' : 'once'}`,
    );
  }

  /** The stored reading of a group (`diamonds at confirmed|once`), however old, or null. */
  private storedReading(
    group: string,
  ): { diamonds: number; at: number; confirmed: boolean } | null {
    const [value, at, mark] = (
      store.getSetting(this.db, `price-seen:${this.key}:${group}`) ?? ''
    ).split(' ');
    const diamonds = Number(value);
    return diamonds > 0 ? { diamonds, at: Number(at), confirmed: mark === 'confirmed' } : null;
  }

  /**
   * The latest price read from the balance for a group, or null: none, or one read once more than
   * a day ago.
   */
  readPrice(group: string): { diamonds: number; confirmed: boolean } | null {
    const read = this.storedReading(group);
    if (!read) return null;
    if (!read.confirmed && !(this.now().getTime() - read.at < READING_KEPT_MS)) return null;
    return { diamonds: read.diamonds, confirmed: read.confirmed };
  }

  /** The list price of a group, when the catalog was read (0: not known). */
  listPrice(group: string): number {
    return this.toolPrices.get(group) ?? 0;
  }

  /** A ready shoot's shot count, when the recipe's price depends on it (its shots not named). */
  async loadShotCountFor(recipe: Recipe): Promise<void> {
    const { request } = recipe;
    if (isReadyShootRecipe(request) && !request.shotIds?.length)
      await this.shotCount(request.readyTemplateSetId);
  }

  /** Shots of a ready shoot (read once per shoot; the recipe's own shot list wins). */
  async shotCount(readyShootId: string): Promise<number> {
    const cached =
      this.shotCounts.get(readyShootId) ??
      Number(store.getSetting(this.db, `shots:${readyShootId}`));
    if (cached > 0) return cached;
    const shoot = await this.client.getReadySet(readyShootId);
    if (!(shoot.shotCount > 0))
      throw new Error(`ready shoot ${readyShootId} was answered without a shot count`);
    this.shotCounts.set(readyShootId, shoot.shotCount);
    store.setSetting(this.db, `shots:${readyShootId}`, String(shoot.shotCount));
    return shoot.shotCount;
  }

  /** Price of one photo with this recipe before anything starts (null: shot count not known yet). */
  quote(recipe: Recipe): PriceQuote | null {
    const request = recipe.request;
    if (isReadyShootRecipe(request)) {
      const shots =
        request.shotIds?.length ??
        (this.shotCounts.get(request.readyTemplateSetId) ||
          Number(store.getSetting(this.db, `shots:${request.readyTemplateSetId}`)));
      if (!shots) return null;
      const shot = this.shotPrice();
      return { diamonds: shots * shot.diamonds, sure: shot.sure };
    }
    return this.toolPrice(requestJobGroup(request));
  }

  /** Until a price is confirmed, a ceiling keeps this margin (a quarter, at least one diamond). */
  static margin(quote: PriceQuote): number {
    return quote.sure ? 0 : Math.max(1, Math.ceil(quote.diamonds * 0.25));
  }

  // ---- reconciliation ------------------------------------------------------------------------

  /** Reads the balance before charges start (batch start), so later reads tell what they cost. */
  async setAnchor(): Promise<number | null> {
    const balance = await this.readBalance();
    this.noteReading(balance);
    if (balance !== null) this.anchor = { balance, at: this.now().getTime() };
    this.batchStartedAt = this.now().getTime();
    this.spentOutside = 0;
    this.beyondBound.clear();
    if (this.db.open) {
      const { kept, expired } = this.storedRefundsDue();
      // Dropped from the store at once, so that a second opening read does not tell them again.
      if (expired.length) this.keepRefundsDue(kept);
      this.refundsNeverCame.push(...expired);
      this.refundsDue = kept;
      this.refundsDueAtStart = new Map(this.refundsDue.map((r) => [r.id, r.diamonds]));
    }
    return balance;
  }

  /**
   * Refunds awaited for longer than REFUND_DUE_KEPT_MS when a batch opened: they never came, so
   * their charges stand (an earlier run counted them as refunded). Each is told once.
   */
  private refundsNeverCame: RefundDue[] = [];

  takeRefundsNeverCame(): RefundDue[] {
    return this.refundsNeverCame.splice(0);
  }

  /** Refunds of this batch's failed jobs the last reading did not show: not counted as spend. */
  get refundsAwaited(): { count: number; diamonds: number } {
    const mine = this.refundsDue.filter((r) => !this.refundsDueAtStart.has(r.id));
    return { count: mine.length, diamonds: mine.reduce((sum, r) => sum + r.diamonds, 0) };
  }

  /**
   * Refunds of failed jobs (spec 3.1: "refunded automatically", no timing) that the last reading
   * did not show yet: the balance showed their charge, not their refund. They are not spend, nor
   * a credit when they land: each reading adds them back, as a refund of a job charged before it
   * (`refundedSince`), and what it shows spent beyond its charges, up to the refunds it may lack,
   * is taken for those refunds, still due. Kept in the studio's store per key, so that the next
   * run does not read them as a credit either (dropped after `REFUND_DUE_KEPT_MS`).
   */
  private refundsDue: RefundDue[] = [];
  /** The refunds due when this batch read its opening balance (`setAnchor`). */
  private refundsDueAtStart = new Map<string, number>();

  /** The refunds due kept in the store, and those awaited too long (`REFUND_DUE_KEPT_MS`). */
  private storedRefundsDue(): { kept: RefundDue[]; expired: RefundDue[] } {
    let stored: unknown;
    try {
      stored = JSON.parse(store.getSetting(this.db, `refunds-due:${this.key}`) ?? '[]');
    } catch {
      return { kept: [], expired: [] };
    }
    const now = this.now().getTime();
    const valid = (Array.isArray(stored) ? stored : []).filter(
      (r): r is RefundDue =>
        typeof r?.id === 'string' &&
        Number.isFinite(r?.diamonds) &&
        r.diamonds > 0 &&
        Number.isFinite(r?.since),
    );
    return {
      kept: valid.filter((r) => now - r.since < REFUND_DUE_KEPT_MS),
      expired: valid.filter((r) => now - r.since >= REFUND_DUE_KEPT_MS),
    };
  }

  /** Failed jobs whose refund a reading showed back in the balance (`lookForRefunds`). */
  private readonly refundsShown = new Set<string>();
  /** Failed jobs whose refund a reading looked for, shown or not. */
  private readonly refundsLookedFor = new Set<string>();

  /**
   * Creates answered 500 since this budget opened: per the spec (4.6) failed after the charge and
   * refunded, with no timing, like a failed job. Their refunds are looked for as a failed job's
   * (`failedSince`, `refundsNotShown`): a refund landing minutes later was read as spend in the
   * service's own apps, and a `--max-diamonds 4` run took 6 from the balance, a real overspend
   * where the refund never came (review rev33 D2).
   */
  private readonly failedCreates: FailedCharge[] = [];

  /** A create of `item` answered 500 (sent at `submittedAt`): its charge's refund is awaited. */
  createFailedAfterCharge(
    item: { id: string; batchId: string; submittedAt: string | null },
    diamonds: number,
  ): void {
    if (this.client.origin === 'embedded' || !(diamonds > 0)) return;
    const submittedAt = item.submittedAt ?? this.now().toISOString();
    // Named by its send, so a refund due kept in the store from an earlier run is never this one.
    this.failedCreates.push({
      id: `${item.id}#500@${submittedAt}`,
      batchId: item.batchId,
      diamonds,
      submittedAt,
    });
  }

  /**
   * A batch's failed jobs (charged since this budget opened) whose refund no balance reading has
   * shown (`lookForRefunds`): under a ceiling their charge keeps its room until one does, since
   * a refund may come late (spec 3.1 gives no timing) or never (review rev16 A1b: 24 charged
   * under --max-diamonds 8). `unread`: of them, those no reading looked for yet. None on the
   * embedded core (it refunds at once, in the same store).
   */
  refundsNotShown(batchId: string): {
    count: number;
    diamonds: number;
    unread: number;
    /** When the first of them was answered failed (ms; 0: none). */
    since: number;
  } {
    if (this.client.origin === 'embedded') return { count: 0, diamonds: 0, unread: 0, since: 0 };
    const rows = this.db
      .prepare(
        `SELECT id, price, updated_at AS updatedAt FROM items
           WHERE batch_id = ? AND job_status = 'failed' AND diamonds = 0 AND price > 0
             AND submitted_at >= ? AND submitted_at >= (SELECT created_at FROM batches WHERE id = ?)`,
      )
      .all(batchId, new Date(this.openedAt).toISOString(), batchId) as {
      id: string;
      price: number;
      updatedAt: string;
    }[];
    const notShown = [
      ...rows,
      ...this.failedCreates
        .filter((c) => c.batchId === batchId)
        .map((c) => ({ id: c.id, price: c.diamonds, updatedAt: c.submittedAt })),
    ].filter((r) => !this.refundsShown.has(r.id));
    return {
      count: notShown.length,
      diamonds: notShown.reduce((sum, r) => sum + r.price, 0),
      unread: notShown.filter((r) => !this.refundsLookedFor.has(r.id)).length,
      since: notShown.length ? Math.min(...notShown.map((r) => Date.parse(r.updatedAt))) : 0,
    };
  }

  /** The least wait after a reading before a refund it did not show is looked for again. */
  refundRecheckMs = 30_000;

  /**
   * Whether failed jobs' refunds a reading looked for and did not show (answered failed at
   * `failedAt`) are due another reading: a refund may come late (spec 3.1: no timing), and in the
   * desktop studio no next run frees the photos it holds (review rev20 R3: held for good after the
   * refund came). From `refundRecheckMs` after the last reading on, then at half the refund's age,
   * so one that never comes costs a few reads a day, not one a minute.
   */
  refundReadingDue(failedAt: number): boolean {
    if (!this.anchor || this.readingDueIn > 0) return false;
    const now = this.now().getTime();
    return now - this.anchor.at >= Math.max(this.refundRecheckMs, (now - failedAt) / 2);
  }

  /**
   * Which failed jobs' refunds a reading (`balance`, read after `anchor`) shows, for the ceiling
   * only (`refundsNotShown`; the spend reported keeps `refundsDue`). A refund is shown when the
   * balance is back up by at least it beyond the least the window's charges can have taken: their
   * list prices (a charge is never counted below the list; a price nothing told counts 0) and the
   * whole charge of a failed job charged in the window. Spend in the service's own apps only
   * makes that look smaller (nothing freed). An outside credit (a top-up) in the window looks the
   * same as a refund and may free a refund that never came: no reading can tell them apart, and
   * holding a failed job's room until the balance shows more than its refund would hold photos a
   * spec-compliant service (refunding at once) lets go; such a credit frees at most its own amount,
   * once, of failed jobs' room only. So does a balance read that does not show a
   * failed job's charge yet (a lagging read), which looks like its charge and refund netted out.
   */
  private lookForRefunds(
    anchor: { balance: number; at: number },
    balance: number,
    charged: { kind: RecipeKind; toolId: string | null; diamonds: number }[],
  ): void {
    const failed = this.failedSince(this.openedAt).filter((r) => !this.refundsShown.has(r.id));
    if (failed.length === 0) return;
    const anchorIso = new Date(anchor.at).toISOString();
    let back = balance - anchor.balance;
    for (const c of charged) {
      const list = this.toolPrices.get(jobGroup(c.kind, c.toolId)) ?? 0;
      back += list > 0 ? Math.min(c.diamonds, list) : c.kind === 'ready_shoot' ? c.diamonds : 0;
    }
    for (const r of failed) if (r.submittedAt >= anchorIso) back += r.diamonds;
    for (const r of failed) {
      this.refundsLookedFor.add(r.id);
      if (r.diamonds <= back) {
        back -= r.diamonds;
        this.refundsShown.add(r.id);
      }
    }
  }

  private keepRefundsDue(due: RefundDue[]): void {
    this.refundsDue = due;
    store.setSetting(this.db, `refunds-due:${this.key}`, JSON.stringify(due));
  }

  /**
   * What the batch's opening and latest balances miss of failed jobs' refunds, to add to the
   * spend they show: a refund due at the start that landed since (+), one of a job failed since
   * that no reading showed yet (−).
   */
  get refundsNotInBalances(): number {
    const dueNow = new Set(this.refundsDue.map((r) => r.id));
    let missing = 0;
    for (const [id, diamonds] of this.refundsDueAtStart) if (!dueNow.has(id)) missing += diamonds;
    for (const r of this.refundsDue) if (!this.refundsDueAtStart.has(r.id)) missing -= r.diamonds;
    return missing;
  }

  /**
   * One balance read (null: no answer, or refused). What it shows of the service's cap is kept:
   * answered beyond the remembered cap, the cap was raised; a daily-cap 429 names it, and a 429
   * goes to the gates (`onRefused`) unless the read is the probe of a day already closed.
   */
  private async readBalance(probe = false): Promise<number | null> {
    const nth = this.requestsUsedToday() + 1;
    const sentAt = this.now().getTime();
    this.lastReadCapped = false;
    try {
      const account = await this.client.getAccount();
      if (this.db.open) this.capRaised(nth);
      this.onAnswered(sentAt);
      this.lastReadError = null;
      this.accountRead(account);
      return account.diamondBalance;
    } catch (err) {
      this.lastReadError = err instanceof Error ? err.message : String(err);
      if (err instanceof ApiError && !err.notSent && this.dailyCapRefusal(err)) {
        this.lastReadCapped = true;
        if (this.db.open) this.learnCap(err.message);
      }
      if (err instanceof ApiError && err.status === 429 && !err.notSent && !probe)
        this.onRefused(err);
      return null;
    }
  }

  /** A 429 to a read of its own that closes the day (by evidence, then words: `isDailyCapRefusal`). */
  private dailyCapRefusal(err: ApiError): boolean {
    return isDailyCapRefusal(err, { used: this.requestsUsedToday(), cap: this.workingCap() });
  }

  /** Whether the last balance read was refused by the service's daily cap. */
  private lastReadCapped = false;

  /**
   * The probe of a day the service's 429 closed: one balance read (answered, the cap was raised:
   * `onAnswered` reopens the day and a remembered cap it passed is forgotten; refused, `onRefused`
   * keeps the day closed until the next probe).
   */
  async probeClosedDay(): Promise<void> {
    await this.readBalance();
  }

  /**
   * After the closing balance read took the request kept for it, one more read shows whether the
   * remembered cap still holds: answered, it was raised (and is forgotten); refused, the 429
   * names it again. Only when the configured cap leaves room for it.
   */
  async probeCap(): Promise<'raised' | 'holds' | null> {
    const cap = this.reserveCap();
    if (cap === null || this.ownCapReached() || this.requestsUsedToday() < cap) return null;
    const balance = await this.readBalance(true);
    if (balance !== null) this.anchor = { balance, at: this.now().getTime() };
    return balance !== null ? 'raised' : this.lastReadCapped ? 'holds' : null;
  }

  /**
   * Creates whose answer was lost (their photo marked uncertain), by sending time (ms) and price:
   * a reading's difference may hold their charge even once the photo's own sending time is
   * cleared (resubmitted, or its resend refused). A reading over one attributes nothing; one a
   * credit hid counts each at its price.
   */
  private lostSends: { itemId: string; at: number; price: number }[] = [];

  answerLost(itemId: string, sentAt: number, price: number): void {
    this.lostSends.push({ itemId, at: sentAt, price });
  }

  /**
   * A balance read outside a reconciliation (the re-read while short of diamonds, sent at
   * `sentAt`): when nothing was submitted since the anchor, it is the anchor from then on, so a
   * top-up it shows stays out of the window of the charges that follow (their reading can tell
   * what they took; `countAtBound` otherwise).
   */
  balanceSeen(balance: number, sentAt: number): void {
    if (!this.anchor || this.reconciling || !this.db.open || sentAt < this.anchor.at) return;
    const anchorAt = this.anchor.at;
    if (this.lostSends.some((l) => l.at >= anchorAt)) return;
    const submitted = this.db
      .prepare('SELECT 1 FROM items WHERE submitted_at >= ? LIMIT 1')
      .get(new Date(this.anchor.at).toISOString());
    if (submitted === undefined) this.anchor = { balance, at: sentAt };
  }

  get anchored(): boolean {
    return this.anchor !== null;
  }

  /** When this batch read its opening balance (ms; `setAnchor`): a charge before it is an earlier run's. */
  get openingReadAt(): number {
    return this.batchStartedAt;
  }

  /** The balance last read, if it was read at or after `since` (ms). */
  balanceReadSince(since: number): number | null {
    return this.anchor && this.anchor.at >= since ? this.anchor.balance : null;
  }

  /** Charges since the balance was last read whose price is not confirmed (a catalog job's diamondCost is a claim). */
  hasUnsureCharges(): boolean {
    if (!this.anchor) return false;
    return (
      this.db
        .prepare(`SELECT 1 FROM items WHERE ${this.unsureSince()} LIMIT 1`)
        .get(new Date(this.anchor.at).toISOString()) !== undefined
    );
  }

  /** Items charged since a time (the one `?`) at a price no reading confirmed; a remote catalog job's cost is a claim. */
  private unsureSince(): string {
    const claims = this.client.origin === 'embedded' ? '' : " OR kind = 'ready_shoot'";
    return `(price_sure = 0${claims}) AND diamonds > 0 AND submitted_at >= ?`;
  }

  /**
   * A batch's charges since the balance was last read whose price is not confirmed
   * (`hasUnsureCharges`), and what they were counted at: the spend no reading has shown yet
   * (none: embedded, or no reading).
   */
  unreadCharges(batchId: string): { count: number; diamonds: number } {
    if (!this.anchor || this.client.origin === 'embedded') return { count: 0, diamonds: 0 };
    const unread = this.db
      .prepare(
        `SELECT COUNT(*) AS count, COALESCE(SUM(diamonds), 0) AS diamonds FROM items
         WHERE batch_id = ? AND ${this.unsureSince()}`,
      )
      .get(batchId, new Date(this.anchor.at).toISOString()) as { count: number; diamonds: number };
    // Read once at a price a credit may have hidden a rise behind (`doubtful`): not shown yet.
    const charge = this.db.prepare(
      'SELECT diamonds FROM items WHERE id = ? AND batch_id = ? AND diamonds > 0',
    );
    for (const d of this.doubtful) {
      const row = charge.get(d.id, batchId) as { diamonds: number } | undefined;
      if (!row) continue;
      unread.count++;
      unread.diamonds += row.diamonds;
    }
    return unread;
  }

  get reconcilePending(): boolean {
    return this.reconciling !== null;
  }

  /**
   * Reads the balance and attributes what was spent since the anchor to the charges made since
   * (items charged after it, refunds excluded): each gets its share, and when they are all of one
   * tool the real price is learnt. Only call with no submission in flight.
   */
  reconcile(): Promise<void> {
    this.reconciling ??= this.doReconcile().finally(() => {
      this.reconciling = null;
    });
    return this.reconciling;
  }

  /** Whether the last reading's balance read failed (no answer, a 5xx): what it was to show is unknown. */
  get readingFailed(): boolean {
    return this.failedReadings > 0;
  }

  /** The first wait before a reading below its list prices is read again (`LAG_RECHECKS`). */
  lagRecheckMs = 5_000;

  /** Balance reads of readings that failed in a row, and when the next may go. */
  private failedReadings = 0;
  private nextReadingAt = 0;

  /**
   * How long before the scheduler may ask for a reading again (0: now). It asks at every tick
   * while one is wanted, so a service whose balance read keeps failing would take the day's
   * requests in seconds: after a failed read the next waits READING_RETRY_MS, doubled per failure
   * up to READING_RETRY_MAX_MS. The closing read after a batch (one request) does not wait.
   */
  get readingDueIn(): number {
    return Math.max(0, this.nextReadingAt - Date.now());
  }

  /** Charges made before `at` (so counted by a reading) whose jobs failed since: refunded. */
  private refundedSince(at: number): { id: string; diamonds: number }[] {
    const iso = new Date(at).toISOString();
    return this.db
      .prepare(
        `SELECT id, price AS diamonds FROM items
           WHERE job_status = 'failed' AND diamonds = 0 AND price > 0 AND submitted_at < ? AND updated_at >= ?`,
      )
      .all(iso, iso) as { id: string; diamonds: number }[];
  }

  /**
   * Charges made since `at` whose jobs failed (refunded), in the order they failed: a reading may
   * show the charge and not yet the refund.
   */
  private failedSince(at: number): { id: string; diamonds: number; submittedAt: string }[] {
    const iso = new Date(at).toISOString();
    const jobs = this.db
      .prepare(
        `SELECT id, price AS diamonds, submitted_at AS submittedAt FROM items
           WHERE job_status = 'failed' AND diamonds = 0 AND price > 0 AND submitted_at >= ?
           ORDER BY updated_at`,
      )
      .all(iso) as { id: string; diamonds: number; submittedAt: string }[];
    const creates = this.failedCreates
      .filter((c) => c.submittedAt >= iso)
      .map(({ id, diamonds, submittedAt }) => ({ id, diamonds, submittedAt }));
    return [...jobs, ...creates];
  }

  /** After a failed read the next waits (`readingDueIn`); after an answer it may go at once. */
  private noteReading(balance: number | null): void {
    if (balance === null) {
      this.failedReadings++;
      this.nextReadingAt =
        Date.now() +
        Math.min(READING_RETRY_MS * 2 ** (this.failedReadings - 1), READING_RETRY_MAX_MS);
    } else {
      this.failedReadings = 0;
      this.nextReadingAt = 0;
    }
  }

  /** The service's words when the last balance read failed. */
  lastReadError: string | null = null;
  /** The last account read: its balance, its plan's status (spec 2.9) when it gave one, and when. */
  lastAccountRead: { balance: number; planStatus: string | null; at: number } | null = null;

  /** Any read of the account (the studio's own re-reads too): its balance and its plan's status. */
  accountRead(account: { diamondBalance: number }): void {
    const planStatus: unknown = (account as { plan?: { status?: unknown } }).plan?.status;
    this.lastAccountRead = {
      balance: account.diamondBalance,
      planStatus: typeof planStatus === 'string' ? planStatus : null,
      at: this.now().getTime(),
    };
  }

  /**
   * The plan's status when it, not the diamonds, is what a 402 stops: the last account read
   * shows a plan not active (spec 2.9) and a balance covering `price` once the charges since that
   * read are taken off (review rev27 O1). Read before the batch's charges, a balance that covered
   * one photo still "covered" the 402 its charge caused: a plain shortage under a plan label
   * that lets creates through ('refunded') was told as the plan's, adding diamonds no help.
   */
  planRefusing(price: number): string | null {
    const account = this.lastAccountRead;
    const plan = account?.planStatus ?? null;
    if (!account || !plan || !INACTIVE_PLANS.has(plan.toLowerCase()) || !this.db.open) return null;
    const { charged } = this.db
      .prepare(
        'SELECT COALESCE(SUM(diamonds), 0) AS charged FROM items WHERE diamonds > 0 AND submitted_at >= ?',
      )
      .get(new Date(account.at).toISOString()) as { charged: number };
    return account.balance - charged >= price ? plan : null;
  }

  private async doReconcile(): Promise<void> {
    const anchor = this.anchor;
    let balance = await this.readBalance();
    this.noteReading(balance);
    if (balance === null || !this.db.open) return;
    let nowIso = this.now().toISOString();
    if (anchor) {
      const since = this.db
        .prepare(
          'SELECT id, kind, tool_id AS toolId, pack_total AS packTotal, submit_request AS submitRequest, diamonds, price, price_sure AS sure FROM items WHERE diamonds > 0 AND submitted_at >= ?',
        )
        .all(new Date(anchor.at).toISOString()) as (Pick<
        store.ItemRow,
        'kind' | 'toolId' | 'packTotal' | 'submitRequest'
      > & {
        id: string;
        diamonds: number;
        price: number;
        sure: number;
      })[];
      // A submission whose answer was lost may or may not be in the difference: attribute nothing.
      // It is one sent in the window that holds no job, whatever its state now (still being sent,
      // uncertain, or marked failed by `--uncertain fail`): a refused create clears its sending time.
      const lost = this.lostSends.filter((l) => l.at >= anchor.at);
      const unknown =
        lost.length > 0 ||
        this.db
          .prepare('SELECT 1 FROM items WHERE job_id IS NULL AND submitted_at >= ? LIMIT 1')
          .get(new Date(anchor.at).toISOString()) !== undefined;
      // Every charge is read by the reading that covers it, at a named price and a catalog job's
      // diamondCost too (a claim: the service may charge more, or have raised it since).
      const charged = unknown ? [] : since;
      // The service refunds a failed job (spec 3.1): one charged before the last reading and
      // seen failed since gave its charge back in this window, which is not a credit; so did one
      // the last reading showed charged but not refunded yet (`refundsDue`).
      const due = new Map(this.refundsDue.map((r) => [r.id, r]));
      const refundedNow = this.refundedSince(anchor.at).filter((r) => !due.has(r.id));
      const dueBack = unknown ? [] : this.refundsDue;
      const refunded = [...refundedNow, ...dueBack].reduce((sum, r) => sum + r.diamonds, 0);
      let spent = anchor.balance - balance + refunded;
      const estimated = charged.reduce((sum, c) => sum + c.diamonds, 0);
      // The least they can have cost: their list prices (a price planned above the list, from an
      // app's debit read once, is relearnt downwards from here).
      const floorOf = (charges: typeof since) =>
        charges.reduce(
          (sum, c) =>
            sum +
            Math.min(c.diamonds, this.toolPrices.get(jobGroup(c.kind, c.toolId)) || c.diamonds),
          0,
        );
      const floor = floorOf(charged);
      // Less than the list prices may be a balance read that shows charges late (a cached or
      // lagging read), not a credit: read again after a while, waiting longer each time, before
      // it is taken for one (no create goes meanwhile: they wait for this reading). A later read
      // that shows the missing drop was lag, and is attributed as any reading.
      for (let i = 0; charged.length > 0 && spent < floor && i < LAG_RECHECKS; i++) {
        await new Promise((resolve) => setTimeout(resolve, this.lagRecheckMs * 2 ** i));
        const again = this.db.open ? await this.readBalance() : null;
        this.noteReading(again);
        if (again === null || !this.db.open) break;
        balance = again;
        nowIso = this.now().toISOString();
        spent = anchor.balance - balance + refunded;
      }
      // The balance is shared with the service's own apps (spec §1 rule 2): a refund or a top-up
      // during the batch shrinks the difference, even below zero. Less than the list prices is
      // no price, so nothing is learnt and those charges stay unsure (their margin is kept).
      // A drop beyond the most its charges could take (`countAtBound`: WORST_RISE times their
      // plan) holds spend outside the run (the owner in the service's own app): no price is
      // learnt from it, its charges are counted at that bound (a later reading settles them),
      // and the rest is told apart (`spentOutside`). A price nothing told has no such bound.
      this.lookForRefunds(anchor, balance, since);
      const priceUnknown = charged.some(
        (c) => c.kind !== 'ready_shoot' && this.toolPrice(jobGroup(c.kind, c.toolId)).unknown,
      );
      // A refund may reach the balance after its job is answered `failed` (spec 3.1 gives no
      // timing): what the reading shows spent beyond its charges, up to the refunds it may lack
      // (whole ones), is those refunds, still due (read back by the next reading), not spend.
      // With a lost answer in the window, or a price nothing told, the excess can be a charge.
      if (!unknown) {
        const stillDue: RefundDue[] = [];
        if (!priceUnknown || charged.length === 0) {
          const now = this.now().getTime();
          const mayLack = [...dueBack, ...refundedNow, ...this.failedSince(anchor.at)].sort(
            (a, b) => b.diamonds - a.diamonds,
          );
          let excess = spent - estimated;
          for (const r of mayLack)
            if (r.diamonds <= excess) {
              excess -= r.diamonds;
              stillDue.push({ id: r.id, diamonds: r.diamonds, since: due.get(r.id)?.since ?? now });
            }
          spent -= stillDue.reduce((sum, r) => sum + r.diamonds, 0);
        }
        this.keepRefundsDue(stillDue);
      }
      const most = priceUnknown ? Infinity : charged.reduce((sum, c) => sum + this.boundOf(c), 0);
      const groups = new Set(charged.map((c) => jobGroup(c.kind, c.toolId)));
      // Spending in the apps comes and goes; a price risen beyond the bound shows in every
      // reading of its tool: the second reading in a row beyond it is a rise, attributed as any
      // reading (and the first one's charges then count what it told apart: `settleEarlier`).
      const beyond = charged.length > 0 && spent > most;
      const riseShownTwice = beyond && [...groups].every((g) => this.beyondBound.has(g));
      if (beyond && !riseShownTwice) {
        for (const g of groups) this.beyondBound.add(g);
        this.spentOutside += spent - this.countAtBound(charged, true);
      } else if (charged.length > 0 && floor > 0 && spent >= floor) {
        for (const g of groups) this.beyondBound.delete(g);
        // A reading is one look at a shared balance: a charge keeps its margin (price_sure 0)
        // unless the reading agrees with the one before, and is not counted below what it was
        // planned at (a credit may hide part of it; `plannedFloor`).
        const priors = new Map([...groups].map((g) => [g, this.readPrice(g)]));
        const update = this.db.prepare(
          'UPDATE items SET diamonds = ?, price = ?, price_sure = ? WHERE id = ?',
        );
        // A charge made at a sure price that the reading shows took no more stays sure.
        const attribute = (c: (typeof charged)[number], share: number, agreed: boolean) => {
          const group = jobGroup(c.kind, c.toolId);
          const counted = Math.max(share, this.plannedFloor(group, c.diamonds, priors.get(group)!));
          const sure = (agreed && counted === share) || (c.sure === 1 && counted === c.diamonds);
          update.run(counted, counted, sure ? 1 : 0, c.id);
          if (!sure && c.kind !== 'ready_shoot')
            this.doubtful.push({ id: c.id, group, read: counted });
        };
        this.db.transaction(() => {
          if (groups.size === 1 && spent % charged.length === 0) {
            const each = spent / charged.length;
            const first = charged[0]!;
            // A ready shoot's price depends on its shots: its shot's price is learnt instead.
            const agreed =
              first.kind !== 'ready_shoot' &&
              this.learnPriceFromBalance(jobGroup(first.kind, first.toolId), each);
            if (first.kind === 'ready_shoot') this.learnShotPriceFromBalance(charged, each);
            for (const c of charged) attribute(c, each, agreed);
            if (first.kind !== 'ready_shoot')
              this.settleEarlier(
                jobGroup(first.kind, first.toolId),
                each,
                new Set(charged.map((c) => c.id)),
              );
          } else {
            // Mixed tools, or one tool whose charges the difference does not divide: shares in
            // proportion to what each was expected to cost, rounded up. Undivided, something
            // else moved the balance (a credit hides charges): the summary must not say less than
            // was taken, so it counts more than the balance shows and says so (run-batch.ts).
            for (const c of charged)
              attribute(c, Math.ceil((spent * c.diamonds) / estimated), false);
          }
        })();
      } else if (charged.length > 0) this.countAtBound(charged);
      else if (lost.length > 0 && spent < floorOf(since)) {
        // A credit hid the window's known charges, and with them whether the lost creates were
        // charged: the summary must not say less than was taken, so each is counted at its price.
        this.countAtBound(since);
        const add = this.db.prepare(
          'UPDATE items SET diamonds = diamonds + ?, price_sure = 0 WHERE id = ?',
        );
        this.db.transaction(() => {
          for (const l of lost) add.run(l.price, l.itemId);
        })();
      }
    }
    const at = Date.parse(nowIso);
    this.lostSends = this.lostSends.filter((l) => l.at >= at);
    this.anchor = { balance, at };
  }
}
