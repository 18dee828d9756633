/**
 * Why work waits, engine-wide, and every rule about 402 and 429 in one place:
 * - 402 (short of diamonds): the service's message is kept, the gate reopens at the amount the
 *   402 named ("required N"), and the balance is re-read with backoff, not at a fixed pace.
 * - 429 of the daily cap, told from a rate limit by evidence before words (`isDailyCapRefusal`):
 *   the day is closed until 00:00 UTC, with a probe now and then in case the cap was raised.
 * - the service's cap as remembered from an earlier day's 429 (budget.ts): work stops one request
 *   short of it, the last being kept for the closing balance read; probes only once it is spent.
 * - any other 429: a rate limit; `Retry-After` (at most 10 min) but never less than a backoff
 *   doubling while refused (read as the daily cap after `REFUSALS_READ_AS_CAP` in a row unless a
 *   longer Retry-After was waited), and then on. A create's long one holds creates only, and lifts
 *   when a job of ours ends (`createsLimitedUntil`).
 * Items waiting on a gate are not failed and spend nothing; the gates open by themselves.
 */
import { ApiError } from '../client';
import { HiddenJobs, type HiddenJobsOptions } from './hidden-jobs';

export type DiamondGate = {
  /** Diamonds the refused submission needed (from the 402's message when it named them). */
  needed: number;
  /** The balance the 402 named, or the last one read. */
  balance: number | null;
  /**
   * The balance last read, when the 402 came or since (not what a 402 named): a reading above it
   * is a top-up, the one sign that may lift a hold of the account's plan.
   */
  lastRead: number | null;
  /** The service's own words, shown as the wait's text and in `run`'s summary. */
  message: string;
  /** When the balance is read next, and how many reads came back short. */
  nextCheckAt: number;
  checks: number;
};

/**
 * `closedAt`: when the day was closed; only a request sent after it can show the cap lifted.
 * `kind`: who closed it: the service's 429, the studio's own count, or the service's cap as
 * remembered with its last request kept for the closing balance read (`reserve`).
 */
export type CapGate = {
  until: number;
  message: string;
  probeAt: number;
  closedAt: number;
  kind: 'service' | 'own' | 'reserve';
  /** `reserve`: the kept request is spent, so probes may go (answered, the cap was raised). */
  probing?: boolean;
};

/** "Insufficient diamonds: 12 required, balance is 5" and the like, read loosely. */
export function parseInsufficient(message: string): {
  required: number | null;
  balance: number | null;
} {
  const number = (re: RegExp) => {
    const m = re.exec(message);
    return m ? Number(m[1]) : null;
  };
  return {
    // "12 required", "required: 12", "required 12 diamonds", "needs 12"
    required:
      number(/(\d+)\s*(?:diamonds?\s*)?(?:are\s*)?required/i) ??
      number(/required[\s:=]*(\d+)/i) ??
      number(/needs?[\s:=]*(\d+)/i),
    balance:
      number(/balance(?:\s+(?:is|of|held))?[\s:=]*(\d+)/i) ??
      number(/(\d+)\s*(?:diamonds?\s*)?(?:held|available|left)/i),
  };
}

/** Wording of a daily limit: a hint only (`isDailyCapRefusal` weighs the evidence first). */
export function isDailyCap(message: string): boolean {
  return /daily|per day|\bcap\b|quota/i.test(message);
}

/** A limit over a period shorter than a day ("10 requests per second", "60/min", "an hour"). */
const SHORT_PERIOD =
  /(?:\bper|\ba|\ban|\beach|\bevery|\/)\s*(?:\d+\s*)?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|s|m|h)\b/i;

/** Words asking to try again within seconds or minutes ("retry after 7 seconds"). */
const RETRY_SOON = /(?:retry|try again)\D{0,20}?\d+\s*(?:seconds?|secs?|s|minutes?|mins?|m)\b/i;

/** Whether a 429's words tie it to seconds, minutes or hours (a rate limit's, not a day's). */
export function namesShortPeriod(message: string): boolean {
  return SHORT_PERIOD.test(message) || RETRY_SOON.test(message);
}

/**
 * A limit on jobs at once ("2 concurrent jobs", "generations in progress", "2 active jobs",
 * "5 running jobs"): over when one ends. A day's cap counts requests, not jobs under way.
 */
const CONCURRENCY =
  /concurren|in progress|at (?:a|one|the same) time|simultaneous|in parallel|\b(?:active|running|queued|pending|unfinished|open)\s+(?:jobs?|generations?|tasks?)\b|(?:jobs?|generations?|tasks?) (?:running|under way|still processing)\b|wait (?:for|until) (?:one|a job|some|a generation)\b[^.;]*\bfinish/i;

/** Whether a refusal's words name a limit on jobs at once (some services answer it 409 or 503). */
export function namesJobsAtOnce(message: string): boolean {
  return CONCURRENCY.test(message);
}

/** The spec's form of the daily cap: it names a number and says it was reached for this key. */
const SPEC_CAP_FORM = /\d+[^.;]*\breached\b[^.;]*\bthis\s+(?:api\s+)?key\b/i;

/** A day's limit said to be reached ("Daily quota exceeded"), not a hint ("Daily quota: slow down"). */
function namesDayReached(message: string): boolean {
  return (
    /\bdaily\b|\bper day\b/i.test(message) &&
    /\b(?:reached|exceeded|exhausted|used up)\b/i.test(message)
  );
}

/** A longer Retry-After than this is waited only this long, and may be a day's limit. */
const LONG_RETRY_AFTER_MS = 10 * 60_000;

/**
 * A Retry-After of an hour or more is a day's limit unless the words name jobs at once or a shorter
 * period; between 10 min and an hour only if the words name a day's cap: rev14 J1, a 'Too Many
 * Requests' with Retry-After 900 at a limit of 2 jobs at once closed the day after 12 of 500
 * requests, its 2 paid jobs left for the next day.
 */
const DAY_LIKE_RETRY_AFTER_MS = 60 * 60_000;

/**
 * Whether a 429 is the daily cap (the day closes) or a rate limit (wait, then on), decided by
 * evidence before wording, since services word both freely ("Request limit of 500 reached", "quota
 * of 10 requests per second"): refused unsent by our own count; with a Retry-After, words of a
 * shorter period or of jobs at once (not the cap), of the cap reached (the cap), else its length
 * (short: a rate limit; hours: a day's); without, a period shorter than a day named; the number
 * named already reached by the studio's own count of today's requests, or that count at the cap
 * known; the spec's form (a number, reached, for this key); then the words. Repeated refusals are
 * weighed by `Gates`.
 */
export function isDailyCapRefusal(
  err: ApiError,
  today: { used?: number; cap?: number | null } = {},
): boolean {
  if (err.status !== 429) return false;
  if (err.notSent) return true;
  const message = err.message;
  const shortPeriod = namesShortPeriod(message);
  const retryAfter = retryAfterMs(err);
  if (retryAfter !== null) {
    if (shortPeriod) return false;
    // The spec's own words of the cap win whatever the Retry-After: 'Request limit of 30 reached
    // for this API key' with 'Retry-After: 5' had the capped key asked every 5 s (rev15 Q1).
    if (!CONCURRENCY.test(message) && (SPEC_CAP_FORM.test(message) || namesDayReached(message)))
      return true;
    // Words of jobs at once keep it a wait on jobs at once however long the Retry-After: 'Too
    // many concurrent jobs' with Retry-After 3600 closed the day after 12 requests (rev15 J3).
    if (CONCURRENCY.test(message) || retryAfter <= LONG_RETRY_AFTER_MS) return false;
    return retryAfter >= DAY_LIKE_RETRY_AFTER_MS || isDailyCap(message);
  }
  const used = today.used ?? 0;
  // The studio's own count at the cap in use outweighs any words.
  if (today.cap != null && used >= today.cap) return true;
  if (shortPeriod || CONCURRENCY.test(message)) return false;
  const named = [...message.matchAll(/(?:cap|limit|quota)\D{0,20}?(\d+)/gi)]
    .map((m) => Number(m[1]))
    .filter((n) => n > 0);
  if (named.some((n) => used >= n)) return true;
  return SPEC_CAP_FORM.test(message) || isDailyCap(message);
}

/** How long a 429 asked to wait (the client read its `Retry-After`), if it said. */
export function retryAfterMs(err: ApiError): number | null {
  return err.retryAfterMs === null ? null : Math.max(0, err.retryAfterMs);
}

export type GateOptions = {
  /** While the daily cap is reached, how often one request is let through to see if it was raised. */
  capProbeMs?: number;
  /** First re-read of a short balance; later reads back off up to `balanceRecheckMaxMs`. */
  balanceRecheckMs?: number;
  balanceRecheckMaxMs?: number;
  /** A 429 without Retry-After and without naming the daily cap waits this long (doubling while refused). */
  rateLimitMs?: number;
  /** The studio's own count of today's requests and the cap in use, weighed on every 429. */
  requestsToday?: () => { used: number; cap: number | null };
  /** Polls of paid jobs refused 402/403 (`HiddenJobs`): the probe's back-off and bounds. */
  hiddenJobs?: HiddenJobsOptions;
};

/**
 * Rate limits in a row, each met by a request sent after the last wait, with nothing answered in
 * between, after which the refusals are read as the day's cap (an unrecognised daily-cap 429 is
 * otherwise asked again all day): about a minute of refusals, the waits doubling from 2 s.
 */
const REFUSALS_READ_AS_CAP = 6;

export class Gates {
  cap: CapGate | null = null;
  diamonds: DiamondGate | null = null;
  /** A transient rate limit: nothing goes out before this moment. */
  rateLimitedUntil = 0;
  /**
   * A create refused 429 with a long Retry-After (10 min to an hour) and no words of a day's cap:
   * only creates wait (polls of paid jobs go on); while jobs of ours were in flight, the limit may
   * be on jobs at once, so one ending lets creates try again (`jobEnded`) before the wait is over.
   */
  createsLimitedUntil = 0;
  private createsLimitedWhileJobs = false;
  /** Rate limits in a row since the last answer (waits without Retry-After double with it). */
  private refusals = 0;
  /** The service refusing to show paid jobs (a poll's 402/403). */
  readonly hiddenJobs: HiddenJobs;

  constructor(private readonly opts: GateOptions = {}) {
    this.hiddenJobs = new HiddenJobs(
      opts.hiddenJobs ?? {
        probeDelayMs: (n) => backoffMs(n, 1000, 60_000, Math.random),
        maxRefusals: 12,
        slowProbeMs: 15 * 60_000,
      },
    );
  }

  /** Next 00:00 UTC after `now`. */
  static nextUtcDay(now: Date): number {
    return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  }

  /**
   * A 429: the daily cap (closes the day) or a rate limit (wait Retry-After). Returns the kind
   * and, for a rate limit, until when.
   */
  tooManyRequests(
    err: ApiError,
    now: Date,
    create?: { jobsInFlight: number },
  ):
    | { kind: 'daily_cap'; until: number }
    | { kind: 'rate_limit'; until: number; createsOnly?: boolean } {
    const retryAfter = retryAfterMs(err);
    // A refusal of a request sent after the last wait ended; one sent before it tells nothing new.
    const fresh = now.getTime() >= this.rateLimitedUntil;
    if (fresh) this.refusals++;
    // Never less than a bare 429's back-off, doubling while refused in a row: a Retry-After of 0
    // obeyed as "now" sent ~480 refused creates in 4-11 s, the whole day's 500 (rev15 J2). A
    // Retry-After no longer than it says no more than none, so the refusals in a row close the day.
    const floor = (this.opts.rateLimitMs ?? 2000) * 2 ** Math.max(0, this.refusals - 1);
    const ownWait = retryAfter === null || retryAfter <= floor;
    const repeated = ownWait && this.refusals >= REFUSALS_READ_AS_CAP;
    if (isDailyCapRefusal(err, this.opts.requestsToday?.()) || repeated) {
      this.refusals = 0;
      this.capReached(
        now,
        repeated && !isDailyCap(err.message)
          ? `${err.message} (refused ${REFUSALS_READ_AS_CAP} times in a row with waits doubling and nothing answered: read as the daily request cap)`
          : err.message,
      );
      return { kind: 'daily_cap', until: this.cap!.until };
    }
    if (!fresh && ownWait) return { kind: 'rate_limit', until: this.rateLimitedUntil };
    if (create && retryAfter !== null && retryAfter > LONG_RETRY_AFTER_MS) {
      const until = now.getTime() + LONG_RETRY_AFTER_MS;
      this.createsLimitedUntil = Math.max(this.createsLimitedUntil, until);
      this.createsLimitedWhileJobs = create.jobsInFlight > 0;
      return { kind: 'rate_limit', until: this.createsLimitedUntil, createsOnly: true };
    }
    const wait = Math.max(retryAfter ?? 0, floor);
    const until = now.getTime() + Math.min(wait, LONG_RETRY_AFTER_MS);
    this.rateLimitedUntil = Math.max(this.rateLimitedUntil, until);
    return { kind: 'rate_limit', until };
  }

  capReached(now: Date, message = 'the daily request cap is reached'): void {
    this.cap = {
      until: Gates.nextUtcDay(now),
      message,
      probeAt: now.getTime() + (this.opts.capProbeMs ?? 2 * 60_000),
      closedAt: now.getTime(),
      kind: 'service',
    };
  }

  /**
   * Work reached the service's cap as remembered, but for the request kept for the closing balance
   * read: closed until 00:00 UTC. While that request is still kept (`spent` false) nothing probes;
   * once it is spent, one probe per `capProbeMs` (answered, the cap was raised). Never replaces a
   * gate the service's 429 or the studio's own count closed.
   */
  reserveReached(now: Date, message: string, spent: boolean): void {
    const gate = this.cap;
    if (gate && now.getTime() < gate.until && gate.kind !== 'reserve') return;
    if (gate?.kind === 'reserve' && now.getTime() < gate.until && gate.probing === spent) return;
    const until = Gates.nextUtcDay(now);
    this.cap = {
      until,
      message,
      probeAt: spent ? now.getTime() + (this.opts.capProbeMs ?? 2 * 60_000) : until,
      closedAt:
        gate?.kind === 'reserve' && now.getTime() < gate.until ? gate.closedAt : now.getTime(),
      kind: 'reserve',
      probing: spent,
    };
  }

  /**
   * Set when a request sent after the service's cap (its 429, or as remembered) closed the day was
   * answered: the cap was raised. Read once (`takeCapRaised`).
   */
  private capRaisedSeen = false;

  takeCapRaised(): boolean {
    const seen = this.capRaisedSeen;
    this.capRaisedSeen = false;
    return seen;
  }

  /**
   * The studio's own count reached the configured cap: the day is closed until 00:00 UTC with no
   * probe (no answer of the service can raise our own count's limit).
   */
  ownCapReached(now: Date, message: string): void {
    const until = Gates.nextUtcDay(now);
    this.cap = {
      until,
      message: this.cap?.message ?? message,
      probeAt: until,
      closedAt: now.getTime(),
      kind: 'own',
    };
  }

  /**
   * A call went through: whatever cap there was has been lifted, if the call was sent after the
   * day closed. A slow request sent before the first refusal says nothing about the cap now:
   * lifting on it sent more requests into the service's cap (10 refused in a row).
   */
  apiSucceeded(sentAt: number): void {
    this.refusals = 0;
    if (this.cap && sentAt < this.cap.closedAt) return;
    if (this.cap && this.cap.kind !== 'own') this.capRaisedSeen = true;
    this.cap = null;
  }

  /** Whether API work may go out now; while capped, one probe per `capProbeMs`. */
  capOpen(now: Date): boolean {
    if (!this.cap) return true;
    if (now.getTime() >= this.cap.until) {
      this.cap = null;
      return true;
    }
    if (now.getTime() >= this.cap.probeAt) {
      this.cap.probeAt = now.getTime() + (this.opts.capProbeMs ?? 2 * 60_000);
      return true;
    }
    return false;
  }

  rateLimited(now: Date): boolean {
    return now.getTime() < this.rateLimitedUntil;
  }

  /** Whether creates wait on a create's long rate limit (`createsLimitedUntil`). */
  createsLimited(now: Date): boolean {
    return now.getTime() < this.createsLimitedUntil;
  }

  /**
   * A job of ours ended: a create limit met while jobs were in flight may have been on jobs at
   * once, so creates may try again now (one refusal more at most per job ended). Returns whether
   * the limit was lifted.
   */
  jobEnded(now: Date): boolean {
    if (!this.createsLimitedWhileJobs || !this.createsLimited(now)) return false;
    this.createsLimitedUntil = 0;
    this.createsLimitedWhileJobs = false;
    return true;
  }

  /**
   * Re-reads of a short balance carried over its reopening on a covering balance: a 402 again at
   * once (refused while the balance covers: a limit the service does not name) backs off further,
   * not from the start; a create charged sets it back. Reopened and refused every ~5 s, the loop
   * spent ~1,000 requests an hour against a cap of 500 a day (review rev32 D3).
   */
  private reopenedChecks = 0;

  /**
   * A 402 came again after the gate reopened on a covering balance, with no charge between: only
   * the gate's own (backing off) re-reads open it again, not every reading of the balance.
   */
  refusedAfterReopen(): boolean {
    return this.diamonds !== null && this.reopenedChecks > 0;
  }

  /** A create was charged: a later 402 is a new shortage, its re-reads from the start. */
  createCharged(): void {
    this.reopenedChecks = 0;
  }

  /**
   * A 402: what it said, and the amount to wait for (named in the message, else `price`);
   * `balanceKnown` is the last balance read before it.
   */
  shortOfDiamonds(
    err: ApiError,
    price: number,
    now: Date,
    balanceKnown: number | null,
  ): DiamondGate {
    const said = parseInsufficient(err.message);
    const needed = Math.max(said.required ?? price, 1);
    const checks = this.diamonds?.checks ?? this.reopenedChecks;
    this.diamonds = {
      needed: Math.max(needed, this.diamonds?.needed ?? 0),
      balance: said.balance ?? this.diamonds?.balance ?? null,
      lastRead: this.diamonds?.lastRead ?? balanceKnown,
      message: err.message,
      nextCheckAt: now.getTime() + this.recheckDelay(checks),
      checks,
    };
    return this.diamonds;
  }

  /** Whether the short balance is due for a re-read; if so the next read is scheduled further out. */
  balanceCheckDue(now: Date): DiamondGate | null {
    const gate = this.diamonds;
    if (!gate || now.getTime() < gate.nextCheckAt) return null;
    gate.checks++;
    gate.nextCheckAt = now.getTime() + this.recheckDelay(gate.checks);
    return gate;
  }

  /**
   * A balance read while short: opens the gate when it covers what the 402 asked for. While the
   * account's plan holds creates (`planHolds`: a plan not active, the balance covering), a
   * covering balance alone opens nothing (it sent a refused create and a read every ~11 s: review
   * rev31 D4); a top-up, a reading above the last one, is worth trying again (review rev32 D5: a
   * run topped up under a plan 'refunded' ended held).
   */
  balanceRead(gate: DiamondGate, balance: number, planHolds = false): boolean {
    const before = gate.lastRead;
    gate.balance = balance;
    gate.lastRead = balance;
    if (planHolds && (before === null || balance <= before)) return false;
    if (balance >= gate.needed && this.diamonds === gate) {
      this.diamonds = null;
      this.reopenedChecks = gate.checks + 1;
      return true;
    }
    return false;
  }

  private recheckDelay(checks: number): number {
    const base = this.opts.balanceRecheckMs ?? 30_000;
    return Math.min(this.opts.balanceRecheckMaxMs ?? 30 * 60_000, base * 2 ** Math.min(checks, 16));
  }
}

/** Exponential backoff with full jitter, in ms. */
export function backoffMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 16));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
