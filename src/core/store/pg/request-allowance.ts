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

export type Admitted = {
  /** True past the day's cap (nothing counted). */
  refused: boolean;
  /** The key's shared count after it, including what processes hold: an upper bound of requests admitted. */
  count: number;
};

type Waiter = { resolve(r: Admitted): void; reject(err: unknown): void };

type Allowance = {
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

export class RequestAllowances {
  private readonly allowances = new Map<string, Allowance>();
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
    let a = this.allowances.get(name);
    if (!a) {
      a = {
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
    if (!a.taking && a.waiting.length === 0 && this.useOne(a)) {
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
          got = await this.send(a, need, want);
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
        for (const w of a.waiting.splice(0))
          w.resolve({ refused: true, count: Math.max(got.total, a.cap) });
      }
    } finally {
      a.taking = false;
    }
  }

  /** One take: gives back what the previous allowance left unused, takes up to `want`. */
  private async send(
    a: Allowance,
    need: number,
    want: number,
  ): Promise<{ granted: number; total: number; others: number }> {
    const sent = performance.now();
    const unused = a.left;
    a.left = 0;
    const rows = await this.ex.query<{ granted: number; total: number; others: number }>(
      'SELECT granted, total, others FROM key_usage_take($1, $2, $3, $4, $5, $6, $7, $8)',
      [a.keyId, a.day, this.holder, unused, need, want, a.cap, HOLD_MS + GRACE_MS],
    );
    const got = rows[0]!;
    a.total = got.total;
    a.left = Math.max(0, got.granted - need);
    a.until = sent + HOLD_MS;
    a.holding = a.left > 0;
    clearTimeout(a.timer);
    if (a.holding) {
      // Give back what is left when the allowance ends (unless a take comes first).
      a.timer = setTimeout(() => void this.expire(a), Math.max(0, a.until - performance.now()));
      a.timer.unref();
    }
    return got;
  }

  private async expire(a: Allowance): Promise<void> {
    const name = `${a.keyId}\n${a.day}\n${a.cap}`;
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
    await this.send(a, 0, 0);
    if (a.waiting.length === 0 && !this.closed) this.allowances.delete(name);
  }
}
