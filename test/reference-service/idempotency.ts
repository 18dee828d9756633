/**
 * Idempotency-Key records (only with honourIdempotencyKey), one per key: a key's first answer is
 * replayed to later requests with the same key and body. A same key with another body is refused
 * 422 (the IETF Idempotency-Key draft; Stripe refuses it too) or, with reuse 'replay', given the
 * stored answer whatever the body; with reuse 'refuseAny409', any repeat of a key seen is refused
 * 409, whatever its first answer (no replay at all). Held in memory, like a cache in front of the API; records may
 * expire (Stripe keeps them 24 h).
 */
export type StoredReply = { status: number; body: Record<string, unknown> };

type KeyRecord =
  | { state: 'inFlight'; body: string }
  | { state: 'done'; body: string; reply: StoredReply; at: number };

export const IN_FLIGHT_ERROR = 'A request with this Idempotency-Key is still being processed';
export const reusedKeyError = (key: string) =>
  `Idempotency-Key ${key} was already used with a different request body`;

/** Stripe's words for a key reused with other parameters (answered 400). */
export const stripeReuseError = (key: string) =>
  `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`;

export type KeyRules = {
  conflictWhileInFlight: boolean;
  /** Records older than this are forgotten (the request is then processed as a new one). */
  ttlMs?: number;
  /**
   * A same key with another body: refused 422 (default), refused 400 in Stripe's words (its
   * idempotency_error), or answered with the stored reply.
   */
  reuse?: 'refuse' | 'refuse400' | 'replay' | 'refuseAny409';
};

/** Words of a service refusing any repeat of a key it has seen, whatever became of it. */
export const keyUsedError = (key: string) => `Idempotency-Key ${key} already used`;

export class IdempotencyRecords {
  private readonly records = new Map<string, KeyRecord>();

  /** What a same-key request gets without being processed, or null (process it, after begin()). */
  earlier(slot: string, key: string, body: string, rules: KeyRules): StoredReply | null {
    let record = this.records.get(slot);
    if (
      record?.state === 'done' &&
      rules.ttlMs !== undefined &&
      Date.now() - record.at > rules.ttlMs
    ) {
      this.records.delete(slot);
      record = undefined;
    }
    if (!record) return null;
    // A key seen is never processed again, nor its answer replayed: refused 409, same body or not.
    if (rules.reuse === 'refuseAny409')
      return { status: 409, body: { success: false, error: keyUsedError(key) } };
    const inFlight = { status: 409, body: { success: false, error: IN_FLIGHT_ERROR } };
    if (record.body !== body) {
      if (rules.reuse === 'replay') return record.state === 'done' ? record.reply : inFlight;
      if (rules.reuse === 'refuse400')
        return { status: 400, body: { success: false, error: stripeReuseError(key) } };
      return { status: 422, body: { success: false, error: reusedKeyError(key) } };
    }
    if (record.state === 'done') return record.reply;
    return rules.conflictWhileInFlight ? inFlight : null;
  }

  begin(slot: string, body: string): void {
    if (!this.records.has(slot)) this.records.set(slot, { state: 'inFlight', body });
  }

  /**
   * Stores the answer (charged creates; 402 too when `keep402`) after `holdMs`, the time the
   * backend still works on it; other answers free the key. A record stored first is kept.
   */
  settle(
    slot: string,
    body: string,
    reply: StoredReply,
    opts: { holdMs: number; keep402: boolean; keepAll?: boolean },
  ): void {
    const keep = opts.keepAll || reply.status < 300 || (opts.keep402 && reply.status === 402);
    const store = () => {
      if (this.records.get(slot)?.state === 'done') return;
      if (keep) this.records.set(slot, { state: 'done', body, reply, at: Date.now() });
      else this.records.delete(slot);
    };
    if (opts.holdMs > 0) setTimeout(store, opts.holdMs).unref();
    else store();
  }

  abandon(slot: string): void {
    if (this.records.get(slot)?.state === 'inFlight') this.records.delete(slot);
  }
}
