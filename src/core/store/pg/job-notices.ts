/**
 * Wakes idle workers when a job becomes claimable (team mode): `jobs.insert` and
 * `jobs.releaseLeases` send `NOTIFY dropshoot_jobs` with the store's schema as payload (delivered
 * at commit, so the row is visible to the claim it wakes), and each process LISTENs on one
 * connection of its own, outside the pool. The claim poll stays as the fallback: a notice lost
 * while the connection is down costs at most one claim interval, and each (re)connection wakes
 * the workers once to catch up on what it missed.
 *
 * Behind PgBouncer in transaction mode LISTEN is accepted but its notices never arrive, so each
 * LISTEN is proven with a probe notice sent through the pool; without it (or when the listening
 * connection cannot be made) the workers fall back to the claim poll, said in one warning line,
 * while LISTEN is tried again in the background (a deaf one with a longer back-off: each try
 * holds a connection for the probe); once a probe is heard, notices are back, said in one line.
 * A listen URL (`--database-listen-url`) lets the listening connection go to PostgreSQL directly
 * while the pool goes through the pooler.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { JobWatch } from '../types';
import type { PgPool } from './pool';
import { scrubSecrets, scrubbedError, type PostgresTarget } from './url';

/** One channel per database; the payload (the schema) keeps services sharing a database apart. */
export const JOBS_CHANNEL = 'dropshoot_jobs';
/** The SQL expression that wakes this schema's workers (transactional: sent at commit). */
export const NOTIFY_JOBS = `pg_notify('${JOBS_CHANNEL}', current_schema())`;

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 10_000;
/** Back-off of the next LISTEN after one that heard no probe (a pooler rarely changes mode). */
const DEAF_RETRY_MIN_MS = 5_000;
const DEAF_RETRY_MAX_MS = 5 * 60_000;
/** How long a LISTEN may take to receive its own probe notice before it is judged deaf. */
const PROBE_MS = 3_000;
const PROBE_PREFIX = 'probe:';

type Retry = { minMs: number; maxMs: number };

export type JobNoticesOptions = {
  /** Where to LISTEN (a direct connection when the pool goes through a pooler); default the pool's. */
  listenTarget?: PostgresTarget;
  log?: (message: string) => void;
  /** Back-off after the listening connection failed or dropped. */
  retry?: Retry;
  /** Back-off after a LISTEN that heard no probe. */
  deafRetry?: Retry;
  probeMs?: number;
};

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
  /** The last LISTEN received nothing (a pooler in transaction mode): polling until one does. */
  private deaf = false;
  /** Set once the fallback was said, until listening works again (one warning, not one per try). */
  private warned = false;
  private probe: { payload: string; heard: () => void } | undefined;
  private readonly target: PostgresTarget;
  private readonly retry: Retry;
  private readonly deafRetry: Retry;
  private readonly log: ((message: string) => void) | undefined;

  constructor(
    private readonly handle: PgPool,
    private readonly options: JobNoticesOptions = {},
  ) {
    this.target = options.listenTarget ?? handle.target;
    this.retry = options.retry ?? { minMs: RETRY_MIN_MS, maxMs: RETRY_MAX_MS };
    this.deafRetry = options.deafRetry ?? { minMs: DEAF_RETRY_MIN_MS, maxMs: DEAF_RETRY_MAX_MS };
    this.log = options.log;
    this.listening = this.nextListening();
  }

  /** Calls `onNotice` after every notice for this schema, and once after each (re)connection. */
  watch(onNotice: () => void): JobWatch {
    this.watchers.add(onNotice);
    if (this.watchers.size === 1 && !this.client && !this.retryTimer) void this.connect();
    return {
      ready: () => (this.closed || this.deaf ? Promise.resolve() : this.listening),
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
      connectionString: this.target.connectionString,
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
      if (msg.channel !== JOBS_CHANNEL) return;
      if (msg.payload === this.schema) this.fire();
      else if (this.probe && msg.payload === this.probe.payload) this.probe.heard();
    });
    let heard: boolean;
    try {
      await client.connect();
      // The schema the pool's NOTIFYs name (the listening connection may reach it otherwise).
      const { rows } = await this.handle.pool.query<{ schema: string }>(
        'SELECT current_schema() AS schema',
      );
      this.schema = rows[0]?.schema;
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
      heard = await this.probeOnce();
    } catch (err) {
      this.dropped(client, err);
      return;
    }
    if (this.client !== client) return; // dropped or closed meanwhile
    if (!heard) {
      this.deaf = true;
      this.warn(
        `listening for new jobs on ${this.target.redacted} receives no notices (a pooler in transaction mode?): claims fall back to polling (LISTEN tried again in the background); give --database-listen-url a direct connection to PostgreSQL`,
      );
      this.markListening(); // ready: the poll does the work meanwhile
      await this.disconnect();
      if (this.closed || this.watchers.size === 0) return;
      this.listening = this.nextListening();
      this.retryLater(this.deafRetry);
      return;
    }
    if (this.warned)
      this.log?.(
        `listening for new jobs on ${this.target.redacted} again (after ${this.attempt} tries): claims no longer wait for the poll`,
      );
    this.deaf = false;
    this.warned = false;
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
    // The pool's credentials too: the schema read and the probe go through it.
    this.warn(
      scrubSecrets(
        scrubbedError(
          err,
          this.target,
          'listening for new jobs failed (claims fall back to polling; retried in the background)',
        ).message,
        this.handle.target.secrets,
      ),
    );
    this.retryLater(this.retry);
  }

  private retryLater(retry: Retry): void {
    const wait = Math.min(retry.maxMs, retry.minMs * 2 ** this.attempt);
    this.attempt++;
    this.retryTimer = setTimeout(() => void this.connect(), wait).unref();
  }

  /** One warning per loss of listening (not one per retry); `connect` says when it is back. */
  private warn(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.log?.(`warning: ${message}`);
  }

  /** Sends a notice through the pool (the path jobs' notices take) and waits for it here. */
  private async probeOnce(): Promise<boolean> {
    const payload = `${PROBE_PREFIX}${randomBytes(8).toString('hex')}`;
    let timer: NodeJS.Timeout | undefined;
    let giveUp!: () => void;
    const heard = new Promise<boolean>((resolve) => {
      this.probe = { payload, heard: () => resolve(true) };
      giveUp = () => resolve(false);
    });
    try {
      await this.handle.pool.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, payload]);
      // Timed from the commit: a busy pool delaying the probe's send is not a deaf LISTEN.
      // Unref'd: a probe under way when the store closes must not hold the process up.
      timer = setTimeout(giveUp, this.options.probeMs ?? PROBE_MS).unref();
      return await heard;
    } finally {
      clearTimeout(timer);
      this.probe = undefined;
    }
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
