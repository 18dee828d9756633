/**
 * Wakes idle workers when a job becomes claimable (team mode): `jobs.insert` and
 * `jobs.releaseLeases` send `NOTIFY dropshoot_jobs` with the store's schema as payload (delivered
 * at commit, so the row is visible to the claim it wakes), and each process LISTENs on one
 * connection of its own, outside the pool. The claim poll stays as the fallback: a notice lost
 * while the connection is down costs at most one claim interval, and each (re)connection wakes
 * the workers once to catch up on what it missed.
 */
import pg from 'pg';
import type { JobWatch } from '../types';
import type { PgPool } from './pool';
import { scrubbedError } from './url';

/** One channel per database; the payload (the schema) keeps services sharing a database apart. */
export const JOBS_CHANNEL = 'dropshoot_jobs';
/** The SQL expression that wakes this schema's workers (transactional: sent at commit). */
export const NOTIFY_JOBS = `pg_notify('${JOBS_CHANNEL}', current_schema())`;

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 10_000;

type Retry = { minMs: number; maxMs: number };

/** The process's listening connection, opened with the first watcher, reopened after any error. */
export class JobNotices {
  private readonly watchers = new Set<() => void>();
  private client: pg.Client | undefined;
  private schema: string | undefined;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Resolves each time a LISTEN is in place; replaced when the connection drops. */
  private listening: Promise<void>;
  private markListening!: () => void;

  constructor(
    private readonly handle: PgPool,
    private readonly log?: (message: string) => void,
    private readonly retry: Retry = { minMs: RETRY_MIN_MS, maxMs: RETRY_MAX_MS },
  ) {
    this.listening = this.nextListening();
  }

  /** Calls `onNotice` after every notice for this schema, and once after each (re)connection. */
  watch(onNotice: () => void): JobWatch {
    this.watchers.add(onNotice);
    if (this.watchers.size === 1 && !this.client && !this.retryTimer) void this.connect();
    return {
      ready: () => (this.closed ? Promise.resolve() : this.listening),
      stop: async () => {
        this.watchers.delete(onNotice);
        if (this.watchers.size === 0) await this.disconnect();
      },
    };
  }

  /** Ends the connection for good (store close). */
  async close(): Promise<void> {
    this.closed = true;
    this.watchers.clear();
    await this.disconnect();
    this.markListening(); // nobody waits for a LISTEN that will not come
  }

  private nextListening(): Promise<void> {
    return new Promise<void>((resolve) => (this.markListening = resolve));
  }

  private async connect(): Promise<void> {
    this.retryTimer = undefined;
    if (this.closed || this.watchers.size === 0 || this.client) return;
    const options = this.handle.pool.options as pg.PoolConfig;
    const client = new pg.Client({
      connectionString: this.handle.target.connectionString,
      application_name: `${options.application_name ?? 'dropshoot'}:listen`,
      connectionTimeoutMillis: options.connectionTimeoutMillis ?? 10_000,
      options: options.options,
      keepAlive: true,
    });
    this.client = client;
    // A dropped connection reports here (never unhandled): listen again after a pause.
    client.on('error', (err) => this.dropped(client, err));
    client.on('end', () => this.dropped(client, new Error('the connection ended')));
    client.on('notification', (msg) => {
      if (msg.channel === JOBS_CHANNEL && msg.payload === this.schema) this.fire();
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
      this.schema = rows[0]?.schema;
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
    } catch (err) {
      this.dropped(client, err);
      return;
    }
    if (this.client !== client) return; // dropped or closed meanwhile
    if (this.attempt > 0) this.log?.(`listening for new jobs again (after ${this.attempt} tries)`);
    this.attempt = 0;
    this.markListening();
    // Jobs inserted while nobody listened: one claim catches up.
    this.fire();
  }

  private dropped(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.closed || this.watchers.size === 0) return;
    this.listening = this.nextListening();
    const wait = Math.min(this.retry.maxMs, this.retry.minMs * 2 ** this.attempt);
    this.attempt++;
    if (this.attempt === 1 || this.attempt % 10 === 0)
      this.log?.(
        scrubbedError(
          err,
          this.handle.target,
          `listening for new jobs failed (claims fall back to polling; retried in ${wait} ms)`,
        ).message,
      );
    this.retryTimer = setTimeout(() => void this.connect(), wait).unref();
  }

  private async disconnect(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    await client.end().catch(() => undefined);
  }

  private fire(): void {
    for (const watcher of this.watchers) watcher();
  }
}
