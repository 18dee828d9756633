/**
 * Why work waits, engine-wide: the service said the daily cap is reached (429: until the next UTC
 * day) or the balance is short (402: until a balance check shows enough). Items waiting on a gate
 * are not failed and spend nothing; the gates open by themselves.
 */
export type DiamondGate = { needed: number; checkedAt: number };

export class Gates {
  capUntil: number | null = null;
  private capProbeAt = 0;
  diamonds: DiamondGate | null = null;

  /** `capProbeMs`: while capped, let work through this often in case the cap was raised. */
  constructor(private readonly capProbeMs = 15 * 60_000) {}

  /** Next 00:00 UTC after `now`. */
  static nextUtcDay(now: Date): number {
    return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  }

  capReached(now: Date): void {
    this.capUntil = Gates.nextUtcDay(now);
    this.capProbeAt = now.getTime() + this.capProbeMs;
  }

  /** A call went through: whatever cap there was has been lifted. */
  apiSucceeded(): void {
    this.capUntil = null;
  }

  capOpen(now: Date): boolean {
    if (this.capUntil === null) return true;
    if (now.getTime() >= this.capUntil) {
      this.capUntil = null;
      return true;
    }
    if (now.getTime() >= this.capProbeAt) {
      // A 429 is not counted by the service, so an occasional probe costs nothing.
      this.capProbeAt = now.getTime() + this.capProbeMs;
      return true;
    }
    return false;
  }

  shortOfDiamonds(needed: number, now: Date): void {
    this.diamonds = { needed: Math.max(needed, this.diamonds?.needed ?? 0), checkedAt: now.getTime() };
  }
}

/** Exponential backoff with full jitter, in ms. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 16));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
