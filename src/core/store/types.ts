/**
 * The service core's storage as typed, async repositories: one interface, implemented for SQLite
 * (`store/sqlite/`, the embedded default and one-process `serve`) and PostgreSQL (`store/pg/`,
 * team mode). Repositories hold queries only; the rules (prices, the balance check before a
 * charge, refund-once, caps, the idempotency window, key limits) stay in the services that call
 * them, so both dialects behave the same by construction.
 *
 * Conventions every implementation keeps:
 * - Diamonds, counts and sizes are JavaScript numbers (PostgreSQL `bigint` is converted; values
 *   stay far below 2^53).
 * - Timestamps are ISO-8601 strings in UTC with milliseconds (`Date#toISOString()`), both as
 *   arguments and in rows; callers pass them from their own clock, except lease times, which
 *   use the database's (or, for SQLite, this machine's) clock.
 * - Ids are made by the caller (`newId`); a repository never invents one.
 * - "Not found" is `undefined` (or `false`, or 0 rows), never an exception. Constraint violations
 *   (a second charge of one job, a balance below 0, a duplicate e-mail) throw.
 * - Methods called on a `tx` inside `transaction(fn)` run in that transaction. Methods called on
 *   the outer store run on their own (each statement atomic); they must not be called from
 *   inside `fn` (SQLite throws: it would deadlock on its single connection).
 */
import type { JobStatus, PlanStatus, TemplateSetEntry } from '../../shared/api';

// ---- rows ----------------------------------------------------------------------------------

export type AccountRow = {
  id: string;
  email: string;
  balance: number;
  planStatus: PlanStatus;
  planProductId: string;
  planProvider: string;
  planIsPremium: boolean;
  planCancelAtPeriodEnd: boolean;
  /** Null for the free local plan (it renews monthly on the day the account was created). */
  planRenewsAt: string | null;
  createdAt: string;
};

/** What authentication yields: enough to count the request and scope every query. */
export type ActiveKey = { keyId: string; accountId: string; dailyCap: number };
export type NewKey = {
  id: string;
  accountId: string;
  hash: string;
  prefix: string;
  dailyCap: number;
  createdAt: string;
};

export type LedgerKind = 'grant' | 'charge' | 'refund';
export type LedgerEntry = {
  /** Increasing in insertion order (an autoincrement / identity column). */
  id: number;
  accountId: string;
  kind: LedgerKind;
  /** Negative for charges, positive for refunds, >= 0 for grants. */
  amount: number;
  jobId: string | null;
  balanceAfter: number;
  note: string | null;
  createdAt: string;
};
export type NewLedgerEntry = Omit<LedgerEntry, 'id' | 'balanceAfter'>;

export type JobKind = 'generation' | 'catalog';
export type UnitStatus = 'pending' | 'completed' | 'failed';
export type JobRow = {
  id: string;
  accountId: string;
  keyId: string;
  kind: JobKind;
  toolId: string;
  status: JobStatus;
  price: number;
  /** The job's `JobInput` as JSON text (parsed and validated by its readers). */
  input: string;
  errorMessage: string | null;
  readySetId: string | null;
  createdAt: string;
  /**
   * PostgreSQL (team mode) only: how many times a worker's lease on the job ran out before it
   * finished it (its process died, or lost the database for a whole lease); counted by `claim`.
   */
  leaseLapses?: number;
};
export type NewJob = {
  id: string;
  accountId: string;
  keyId: string;
  kind: JobKind;
  toolId: string;
  price: number;
  input: string;
  templateSetId: string | null;
  readySetId: string | null;
  createdAt: string;
};
export type UnitRow = {
  idx: number;
  shotId: string | null;
  status: UnitStatus;
  errorMessage: string | null;
};
export type ResultRow = { unitIdx: number; n: number; blobId: string };
export type UnitRef = { jobId: string; idx: number };

export type IdempotencyRow = {
  accountId: string;
  endpoint: string;
  key: string;
  bodyHash: string;
  status: number;
  /** The stored response body (JSON object). */
  body: object;
  createdAt: string;
};

/** The API's template set as stored; a row read back may name a tool this build no longer knows. */
export type TemplateSetRow = Omit<TemplateSetEntry, 'toolId'> & { toolId: string };
export type NewTemplateSet = TemplateSetRow & { accountId: string; sourceJobId: string | null };

export type BlobOrigin = 'upload' | 'result' | 'fetched';
export type BlobRecord = { id: string; sha256: string; mime: string; size: number };
export type NewBlobRow = BlobRecord & {
  accountId: string | null;
  origin: BlobOrigin;
  createdAt: string;
};

// ---- repositories --------------------------------------------------------------------------

export interface AccountRepository {
  /** Inserts an account with balance 0 and the free local plan; throws if the e-mail (case-insensitive) is taken. */
  create(account: { id: string; email: string; createdAt: string }): Promise<void>;
  /** The account id for an e-mail, compared case-insensitively; undefined if none. */
  idByEmail(email: string): Promise<string | undefined>;
  /** The account with its balance and plan; undefined if none. No lock. */
  get(id: string): Promise<AccountRow | undefined>;
}

export interface KeyRepository {
  /** Inserts a key row (hash unique; throws on a duplicate). */
  create(key: NewKey): Promise<void>;
  /** The unrevoked key with this SHA-256 hex hash; undefined if none or revoked. The poll path's lookup (cached above). */
  findActiveByHash(hash: string): Promise<ActiveKey | undefined>;
  /** The unrevoked key with this id; undefined if none or revoked. */
  findActiveById(keyId: string): Promise<ActiveKey | undefined>;
  /** Unrevoked keys of the account (the active-key limit is the caller's rule; call inside a transaction to hold it). */
  countActive(accountId: string): Promise<number>;
  /** Id of the account's oldest (by created_at) unrevoked key, found by e-mail (case-insensitive); undefined if none. */
  firstActiveIdByEmail(email: string): Promise<string | undefined>;
  /** Sets revoked_at if the key is active: 'revoked'; 'already revoked' if it was; 'missing' if no such key. */
  revoke(keyId: string, revokedAt: string): Promise<'revoked' | 'already revoked' | 'missing'>;
  /**
   * A value that changes whenever another process may have changed keys since the last call
   * (SQLite: `PRAGMA data_version`; PostgreSQL: e.g. a counter bumped by every revoke). Caches of
   * authenticated keys drop their entries when it changes; called at most once per millisecond.
   */
  changeMarker(): Promise<number | string>;
}

export interface LedgerRepository {
  /**
   * The account's balance; undefined if no such account. With `forUpdate` (only inside a
   * transaction) the account row stays locked until commit, so a check-then-append is exact
   * (PostgreSQL: SELECT … FOR UPDATE; SQLite: the transaction already holds the write lock).
   */
  balanceOf(accountId: string, opts?: { forUpdate?: boolean }): Promise<number | undefined>;
  /**
   * Adds `amount` to the account's balance and appends the entry with the new balance, both in
   * the caller's transaction; returns the new balance. Throws (writing nothing) if the balance
   * would go below 0, or on a second charge or a second refund for one job.
   */
  append(entry: NewLedgerEntry): Promise<number>;
  /** The charge entry of a job (amount negative); undefined if the job was never charged. */
  chargeOf(jobId: string): Promise<{ accountId: string; amount: number } | undefined>;
  /** Whether the job already has its refund entry. */
  hasRefund(jobId: string): Promise<boolean>;
  /** Every entry of the account, oldest first (by id). */
  entriesFor(accountId: string): Promise<LedgerEntry[]>;
}

export interface JobRepository {
  /** Inserts the job (status 'processing', no lease) and one 'pending' unit per entry of `units`, idx 0..n-1. */
  insert(job: NewJob, units: readonly { shotId: string | null }[]): Promise<void>;
  /** One job by id (any account: callers check ownership); undefined if none. The poll path's read: one indexed lookup. */
  get(id: string): Promise<JobRow | undefined>;
  /**
   * Whether the job's row exists once no creation still holds its account's row (PostgreSQL waits
   * up to `waitMs` for that, then throws): after a creation's COMMIT went unanswered, whether it
   * landed. Call on the outer store.
   */
  landed(id: string, accountId: string, waitMs: number): Promise<boolean>;
  /** Ids of every 'processing' job, oldest first (the one-process runner's resume). */
  processingIds(): Promise<string[]>;
  /** The job's units, by idx. */
  unitsOf(jobId: string): Promise<UnitRow[]>;
  /** The job's result blobs, by unit idx then n. Polled often: a plain indexed read, no join. */
  resultsOf(jobId: string): Promise<ResultRow[]>;
  /** Sets the job's provider name and adds costUsd to its provider cost (a null cost leaves the sum as it is). */
  recordProviderCost(jobId: string, provider: string, costUsd: number | null): Promise<void>;
  /** Marks a still-pending unit as started at `at` (a crash while it is set counts an interruption). */
  markUnitStarted(jobId: string, idx: number, at: string): Promise<void>;
  /** Clears the started mark of these units (a clean shutdown cut them, not a crash). */
  clearUnitsStarted(units: readonly UnitRef[]): Promise<void>;
  /**
   * Every pending unit still marked started gets interruptions + 1 and its mark cleared, in one
   * statement; returns them with their new counts. (One-process start-up only.)
   */
  countInterruptions(): Promise<(UnitRef & { interruptions: number })[]>;
  /**
   * Pending unit -> 'completed' with its result blob ids (n = 0..), clearing the started mark;
   * false (writing nothing) if the unit was not pending, or if `leaseOwner` is given and the
   * job's lease is not held by it.
   */
  completeUnit(
    jobId: string,
    idx: number,
    blobIds: readonly string[],
    leaseOwner?: string,
  ): Promise<boolean>;
  /** Pending unit -> 'failed' with the message, clearing the started mark; false as for completeUnit. */
  failUnit(jobId: string, idx: number, message: string, leaseOwner?: string): Promise<boolean>;
  /** 'processing' job -> status with the message and finished_at, clearing any lease; false if it had already left 'processing'. */
  finish(
    jobId: string,
    status: 'completed' | 'failed',
    errorMessage: string | null,
    finishedAt: string,
  ): Promise<boolean>;
  /**
   * Leases up to `limit` 'processing' jobs whose lease is absent or expired to `workerId` for
   * `leaseMs` (oldest first; rows another claimer holds are skipped, never waited for); returns
   * their ids. A job is never leased to two workers at once. Taking a lease that ran out (not one
   * released) adds one to the job's `leaseLapses`.
   */
  claim(workerId: string, leaseMs: number, limit: number): Promise<string[]>;
  /** Extends every lease `workerId` still holds to now + leaseMs; returns the ids it still holds (a lost lease is not returned). */
  renewLease(workerId: string, leaseMs: number): Promise<string[]>;
  /** Clears the leases `workerId` holds (graceful shutdown), so other workers may claim them at once; returns how many. */
  releaseLeases(workerId: string): Promise<number>;
  /**
   * PostgreSQL only: gives up one job whose run failed (a database error mid-run) so any worker
   * may claim it at once, counting one lapse as a killed run does (so a job that fails every run
   * ends failed and refunded after `maxInterruptions`). False when `workerId` no longer held it.
   * With `lapse: false` (an input the blob store could not give: a rerun pays nothing) no lapse
   * is counted; `holdMs` (default 0) keeps every worker from claiming it for that long, so a blob
   * store outage is not rerun in a tight loop.
   */
  releaseFailedRun?(
    workerId: string,
    jobId: string,
    opts?: { lapse?: boolean; holdMs?: number },
  ): Promise<boolean>;
  /**
   * PostgreSQL only (absent on SQLite, where one process creates and runs every job): calls
   * `onClaimable` soon after any process inserts a job or releases leases, and once after each
   * (re)connection of the listening connection, so an idle worker claims at once instead of at
   * its next poll.
   */
  watchClaimable?(onClaimable: () => void): JobWatch;
}

/** A `watchClaimable` subscription: `ready()` resolves while notices are being received; `stop` ends it. */
export type JobWatch = { ready(): Promise<void>; stop(): Promise<void> };

export interface RequestCountRepository {
  /**
   * Counts one request of the key on the UTC day (`YYYY-MM-DD`) unless `cap` are already
   * counted: atomic, exact whichever process answers. Returns the count after it, or with
   * `refused` the count that stopped it (nothing added). SQLite may batch the writes in memory
   * (one process per file); `close()` writes what is pending.
   */
  increment(keyId: string, day: string, cap: number): Promise<{ count: number; refused: boolean }>;
  /** Requests counted for the key on the day (including any not yet written). */
  get(keyId: string, day: string): Promise<number>;
}

export interface IdempotencyRepository {
  /** The stored answer for (account, endpoint, key), whatever its age (the window is the caller's rule); undefined if none. */
  get(accountId: string, endpoint: string, key: string): Promise<IdempotencyRow | undefined>;
  /**
   * Stores the answer. If a row for the same (account, endpoint, key) exists, it is replaced
   * only when created before `replaceBefore` (an expired one) and otherwise left alone: then
   * false is returned (another request answered first; the caller rolls back and replays).
   * PostgreSQL: a concurrent insert of the same key waits for the other transaction, then false.
   */
  put(row: IdempotencyRow, replaceBefore: string): Promise<boolean>;
  /** Deletes the row (a refunded failure frees its key). */
  delete(accountId: string, endpoint: string, key: string): Promise<void>;
}

export interface TemplateSetRepository {
  /** Inserts a saved template set. */
  insert(set: NewTemplateSet): Promise<void>;
  /** The account's set with this id; undefined if none or another account's. */
  get(accountId: string, id: string): Promise<TemplateSetRow | undefined>;
  /** The account's sets, newest first, ties by id. */
  list(accountId: string): Promise<TemplateSetRow[]>;
  /** Deletes the account's set; false if there was none. */
  delete(accountId: string, id: string): Promise<boolean>;
}

export interface BlobRowRepository {
  /** Inserts a public blob id for stored content (several ids may name one sha256). */
  insert(row: NewBlobRow): Promise<void>;
  /** The blob with this public id; undefined if none. Served on every file GET: one indexed lookup. */
  get(id: string): Promise<BlobRecord | undefined>;
  /** Whether any row names this content. */
  isRecorded(sha256: string): Promise<boolean>;
  /** Every distinct sha256 some row names (the orphan sweep). */
  recordedShas(): Promise<Set<string>>;
  /** Bytes of the distinct content (by sha256) the account's own rows name; 0 if none. */
  accountBytes(accountId: string): Promise<number>;
  /** Whether one of the account's own rows names this content. */
  accountHolds(accountId: string, sha256: string): Promise<boolean>;
}

// ---- the store -----------------------------------------------------------------------------

export type StoreDialect = 'sqlite' | 'postgres';

export interface Store {
  readonly dialect: StoreDialect;
  readonly accounts: AccountRepository;
  readonly keys: KeyRepository;
  readonly ledger: LedgerRepository;
  readonly jobs: JobRepository;
  readonly requests: RequestCountRepository;
  readonly idempotency: IdempotencyRepository;
  readonly templates: TemplateSetRepository;
  readonly blobs: BlobRowRepository;
  /**
   * Runs `fn` in one transaction and returns its result: committed if it resolves, rolled back
   * (rethrowing) if it throws. SQLite: BEGIN IMMEDIATE on its one connection; the outer store's
   * other callers wait until it ends. PostgreSQL: READ COMMITTED with the row locks the
   * repositories take (`forUpdate`), re-run from the start on 40001/40P01, so `fn` must do
   * nothing but store calls and pure computation. A `transaction` called on `tx` joins it.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /** Resolves if the database answers a read of its schema; rejects with the reason otherwise (readiness). */
  ping(): Promise<void>;
  /** Writes anything pending (batched counts) and closes the connection(s). */
  close(): Promise<void>;
}
