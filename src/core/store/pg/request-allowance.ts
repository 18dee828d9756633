/**
 * The daily cap without a round trip per request: each process admits a key's requests from a
 * small allowance it took ahead from the shared count (`key_usage_take`, migration 0030), sized
 * by the key's recent rate in this process, and gives back what it did not use when the
 * allowance ends (HOLD_MS after it asked) or at its next take. A key polled at a steady rate
 * then costs one statement per HOLD_MS per process instead of one per request; a key used
 * rarely asks for just what is waiting (one request: no hold at all, as a plain upsert).
 *
 * Exact across processes: the shared count includes what every process holds and never passes
 * the cap, so no more than the cap are ever admitted. A request finding the count at the cap is
 * refused only once no other process holds anything: while one does, it asks again every
 * RETRY_MS until that process has given back what it did not use (within HOLD_MS, when it is
 * alive) or its hold has expired. So the 501st request of a day is refused whichever process
 * answers, and the 500th is admitted, up to one HOLD_MS late. The one inexactness is on the safe
 * side: a process that dies (or stalls past HOLD_MS + GRACE_MS) never gives its hold back, and
 * what it held counts as used (at most one allowance per key, a fraction of a second of its
 * requests). An allowance is used only until HOLD_MS after its take was sent, and the database
 * keeps the hold HOLD_MS + GRACE_MS after the take ran: a late use can never meet an expired hold.
 *
 * A busy key's next allowance is taken ahead (`prefetch`, migration 0040's `p_keep`): when what is
 * left would last less than PREFETCH_MS at the key's recent rate, or the allowance ends within
 * PREFETCH_MS, one take goes out while requests go on using what is left, which that take keeps
 * held (and lengthens) instead of giving it back. So a steadily polled key's requests do not wait
 * for the round trip every HOLD_MS. Not near the cap: there allowances end and are given back as
 * above, so another process's wait for them stays bounded by HOLD_MS.
 *
 * A final refusal (the count at the cap, nothing held by anyone) stays final for that key, day and
 * cap, so the process remembers it and refuses later calls without asking the database again.
 */
import type { Executor } from './executor';

/** How long a process may use an allowance; also how long another may wait for it near the cap. */
export const HOLD_MS = 100;
/** How much longer the database keeps a hold before counting it as used (its process is gone). */
const GRACE_MS = 2_000;
/** The most one take asks for beyond what is waiting. */
const MAX_AHEAD = 256;
/** How often a request at the cap asks again while other processes hold counts. */
const RETRY_MS = 20;
/** How far ahead of running out (in time, at the key's recent rate) the next allowance is taken. */
const PREFETCH_MS = 50;
/** The least rate (requests per HOLD_MS) worth taking ahead for: slower keys take on demand. */
const PREFETCH_MIN_RATE = 8;

export type Admitted = {
  /** True past the day's cap (nothing counted). */
  refused: boolean;
  /** The key's shared count after it, including what processes hold: an upper bound of requests admitted. */
  count: number;
};

type Waiter = { resolve(r: Admitted): void; reject(err: unknown): void };

type Allowance = {
  name: string;
  keyId: string;
  day: string;
  cap: number;
  /** Requests this process may still admit, until `until` (performance.now()). */
  left: number;
  until: number;
  /** The shared count at the last take. */
  total: number;
  /** Whether this process may hold counts in the database (a take held some beyond what was waiting). */
  holding: boolean;
  waiting: Waiter[];
  taking: boolean;
  /** Requests admitted in the current and the previous HOLD_MS window: the rate a take plans for. */
  windowStart: number;
  thisWindow: number;
  lastWindow: number;
  timer: NodeJS.Timeout | undefined;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Most keys remembered at their cap; past it the memo starts again (it only saves round trips). */
const MAX_FULL = 10_000;

export class RequestAllowances {
  private readonly allowances = new Map<string, Allowance>();
  /**
   * Keys (with day and cap) whose refusal was final: the count at the cap with nothing held
   * anywhere, so it can only stay there that day. Later requests are refused here, without a
   * round trip (a flood of calls past the cap costs the database nothing).
   */
  private readonly full = new Set<string>();
  private closed = false;

  constructor(
    private readonly ex: Executor,
    /** Names this process's holds (unique per store instance). */
    private readonly holder: string,
  ) {}

  /** Admits one request of the key on the UTC day, or refuses it past the cap. */
  admit(keyId: string, day: string, cap: number): Promise<Admitted> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const name = `${keyId}\n${day}\n${cap}`;
    if (this.full.has(name)) return Promise.resolve({ refused: true, count: cap });
    let a = this.allowances.get(name);
    if (!a) {
      a = {
        name,
        keyId,
        day,
        cap,
        left: 0,
        until: 0,
        total: 0,
        holding: false,
        waiting: [],
        taking: false,
        windowStart: performance.now(),
        thisWindow: 0,
        lastWindow: 0,
        timer: undefined,
      };
      this.allowances.set(name, a);
    }
    // While a take ahead is on its way, what is left of the allowance is still used.
    if (a.waiting.length === 0 && this.useOne(a)) {
      this.maybePrefetch(a);
      return Promise.resolve({ refused: false, count: a.total });
    }
    const admitted = new Promise<Admitted>((resolve, reject) =>
      a.waiting.push({ resolve, reject }),
    );
    if (!a.taking) void this.take(name, a);
    return admitted;
  }

  /** Gives back every allowance's unused part (graceful shutdown); later admits are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.allowances.entries()].map(async ([name, a]) => {
        clearTimeout(a.timer);
        while (a.taking) await sleep(5);
        if (a.holding) await this.giveBack(name, a);
      }),
    );
  }

  private useOne(a: Allowance): boolean {
    if (a.left <= 0 || performance.now() >= a.until) return false;
    a.left--;
    this.counted(a, 1);
    return true;
  }

  /** Takes the next allowance ahead when this one is about to run out (see the header). */
  private maybePrefetch(a: Allowance): void {
    if (a.taking || this.closed) return;
    const rate = Math.max(a.thisWindow, a.lastWindow);
    if (rate < PREFETCH_MIN_RATE) return;
    const want = Math.min(MAX_AHEAD, rate);
    // Near the cap (what is left of the day within a few allowances), take on demand only.
    if (a.cap - a.total < 4 * want) return;
    const soon = (rate * PREFETCH_MS) / HOLD_MS;
    if (a.left > soon && a.until - performance.now() > PREFETCH_MS) return;
    void this.prefetch(a, want);
  }

  private async prefetch(a: Allowance, want: number): Promise<void> {
    a.taking = true;
    try {
      await this.send(a, 0, want, true);
    } catch {
      // Nothing changed in the database's view: the allowance ends (and is given back) as usual.
      if (a.holding && !this.closed) this.armExpiry(a);
    } finally {
      a.taking = false;
    }
    if (a.waiting.length > 0) void this.take(a.name, a);
  }

  private counted(a: Allowance, n: number): void {
    const now = performance.now();
    if (now - a.windowStart >= HOLD_MS) {
      // A window with nothing in it between: the rate fell to nothing.
      a.lastWindow = now - a.windowStart >= 2 * HOLD_MS ? 0 : a.thisWindow;
      a.thisWindow = 0;
      a.windowStart = now;
    }
    a.thisWindow += n;
  }

  /** Serves the waiting requests from the allowance, taking again while some remain. */
  private async take(name: string, a: Allowance): Promise<void> {
    a.taking = true;
    try {
      while (a.waiting.length > 0) {
        while (a.waiting.length > 0 && this.useOne(a))
          a.waiting.shift()!.resolve({ refused: false, count: a.total });
        if (a.waiting.length === 0) break;
        const need = a.waiting.length;
        const want = need + Math.min(MAX_AHEAD, Math.max(a.thisWindow, a.lastWindow));
        let got: { granted: number; total: number; others: number };
        try {
          got = await this.send(a, need, want, false);
        } catch (err) {
          for (const w of a.waiting.splice(0)) w.reject(err);
          break;
        }
        const served = a.waiting.splice(0, Math.min(got.granted, need));
        this.counted(a, served.length);
        for (const w of served) w.resolve({ refused: false, count: got.total });
        if (got.granted >= need || a.waiting.length === 0) continue;
        // At the cap. Final only when no other process holds counts it may give back.
        if (got.others > 0) {
          await sleep(RETRY_MS);
          continue;
        }
        if (this.full.size >= MAX_FULL) this.full.clear();
        this.full.add(name);
        for (const w of a.waiting.splice(0))
          w.resolve({ refused: true, count: Math.max(got.total, a.cap) });
      }
    } finally {
      a.taking = false;
    }
  }

  /**
   * One take of up to `want` for the `need` requests waiting. Either gives back what the current
   * allowance left unused first, or (`keep`, a take ahead) keeps it held and goes on using it
   * while the take is on its way.
   */
  private async send(
    a: Allowance,
    need: number,
    want: number,
    keep: boolean,
  ): Promise<{ granted: number; total: number; others: number }> {
    const sent = performance.now();
    const kept = keep ? a.left : 0;
    const unused = keep ? 0 : a.left;
    if (!keep) a.left = 0;
    const rows = await this.ex.query<{ granted: number; total: number; others: number }>(
      'SELECT granted, total, others FROM key_usage_take($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [a.keyId, a.day, this.holder, unused, kept, need, want, a.cap, HOLD_MS + GRACE_MS],
    );
    const got = rows[0]!;
    a.total = got.total;
    // Kept: what is left of it now (requests used some meanwhile), plus the new part.
    a.left = (keep ? a.left : 0) + Math.max(0, got.granted - need);
    a.until = sent + HOLD_MS;
    // The database may hold more for this process than is left (used while the take was on its
    // way): given back, down to nothing, when the allowance ends.
    a.holding = a.left > 0 || kept > 0;
    clearTimeout(a.timer);
    if (a.holding) this.armExpiry(a);
    return got;
  }

  /** Gives back what is left when the allowance ends (unless a take comes first). */
  private armExpiry(a: Allowance): void {
    clearTimeout(a.timer);
    a.timer = setTimeout(() => void this.expire(a), Math.max(0, a.until - performance.now()));
    a.timer.unref();
  }

  private async expire(a: Allowance): Promise<void> {
    const name = a.name;
    if (a.taking || this.closed) return;
    a.taking = true;
    try {
      await this.giveBack(name, a);
    } catch {
      // Not given back: the database counts it as used once the hold expires.
    } finally {
      a.taking = false;
    }
    if (a.waiting.length > 0) void this.take(name, a);
    else if (!a.holding) this.allowances.delete(name);
  }

  private async giveBack(name: string, a: Allowance): Promise<void> {
    a.until = 0;
    await this.send(a, 0, 0, false);
    if (a.waiting.length === 0 && !this.closed) this.allowances.delete(name);
  }
}
