/**
 * Idempotency-Key records (only with honourIdempotencyKey): a key's first answer is replayed to
 * later requests with the same key and body. Held in memory, like a cache in front of the API.
 */
export type StoredReply = { status: number; body: Record<string, unknown> };

type KeyRecord = { state: 'inFlight' } | { state: 'done'; reply: StoredReply };

export const IN_FLIGHT_ERROR = 'A request with this Idempotency-Key is still being processed';

export class IdempotencyRecords {
  private readonly records = new Map<string, KeyRecord>();

  /** What a same-key request gets without being processed, or null (process it, after begin()). */
  earlier(slot: string, conflictWhileInFlight: boolean): StoredReply | null {
    const record = this.records.get(slot);
    if (record?.state === 'done') return record.reply;
    if (record?.state === 'inFlight' && conflictWhileInFlight)
      return { status: 409, body: { success: false, error: IN_FLIGHT_ERROR } };
    return null;
  }

  begin(slot: string): void {
    if (!this.records.has(slot)) this.records.set(slot, { state: 'inFlight' });
  }

  /**
   * Stores the answer (charged creates; 402 too when `keep402`) after `holdMs`, the time the
   * backend still works on it; other answers free the key. A record stored first is kept.
   */
  settle(slot: string, reply: StoredReply, opts: { holdMs: number; keep402: boolean }): void {
    const keep = reply.status < 300 || (opts.keep402 && reply.status === 402);
    const store = () => {
      if (this.records.get(slot)?.state === 'done') return;
      if (keep) this.records.set(slot, { state: 'done', reply });
      else this.records.delete(slot);
    };
    if (opts.holdMs > 0) setTimeout(store, opts.holdMs).unref();
    else store();
  }

  abandon(slot: string): void {
    if (this.records.get(slot)?.state === 'inFlight') this.records.delete(slot);
  }
}
