/**
 * The core's schema on PostgreSQL: the SQLite schema as of its migration 0030, in PostgreSQL's
 * types (`bigint` diamonds and sizes, `timestamptz`), plus job leases for distributed workers.
 * JSON columns stay `text`, so what the core wrote is what it reads back, byte for byte.
 */
export const version = 10;

export const sql = `
  CREATE TABLE accounts (
    id text PRIMARY KEY,
    email text NOT NULL,
    balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
    plan_status text NOT NULL DEFAULT 'active',
    plan_product_id text NOT NULL DEFAULT 'local_free',
    plan_provider text NOT NULL DEFAULT 'dropshoot',
    plan_is_premium boolean NOT NULL DEFAULT false,
    plan_cancel_at_period_end boolean NOT NULL DEFAULT false,
    plan_renews_at timestamptz,
    created_at timestamptz NOT NULL
  );
  -- SQLite compares e-mails with COLLATE NOCASE; here the index (and every lookup) uses lower().
  CREATE UNIQUE INDEX accounts_email ON accounts (lower(email));

  CREATE TABLE api_keys (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id),
    hash text NOT NULL UNIQUE,
    prefix text NOT NULL,
    daily_cap integer NOT NULL CHECK (daily_cap > 0),
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  );
  CREATE INDEX api_keys_account ON api_keys (account_id);

  -- day is the UTC date as text (YYYY-MM-DD), as in SQLite.
  CREATE TABLE key_usage (
    key_id text NOT NULL REFERENCES api_keys(id),
    day text NOT NULL,
    count integer NOT NULL CHECK (count >= 0),
    PRIMARY KEY (key_id, day)
  );

  -- Append-only: the triggers below refuse UPDATE and DELETE.
  CREATE TABLE ledger (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id),
    kind text NOT NULL CHECK (kind IN ('grant', 'charge', 'refund')),
    amount bigint NOT NULL,
    job_id text,
    balance_after bigint NOT NULL CHECK (balance_after >= 0),
    note text,
    created_at timestamptz NOT NULL,
    CHECK ((kind = 'charge' AND amount < 0 AND job_id IS NOT NULL)
        OR (kind = 'refund' AND amount > 0 AND job_id IS NOT NULL)
        OR (kind = 'grant' AND amount >= 0))
  );
  CREATE INDEX ledger_account ON ledger (account_id);
  CREATE UNIQUE INDEX ledger_one_charge_per_job ON ledger (job_id) WHERE kind = 'charge';
  CREATE UNIQUE INDEX ledger_one_refund_per_job ON ledger (job_id) WHERE kind = 'refund';
  CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'ledger is append-only'; END;
  $$;
  CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
  CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
  CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

  CREATE TABLE blobs (
    id text PRIMARY KEY,
    sha256 text NOT NULL,
    mime text NOT NULL,
    size bigint NOT NULL CHECK (size >= 0),
    account_id text REFERENCES accounts(id),
    origin text NOT NULL CHECK (origin IN ('upload', 'result', 'fetched')),
    created_at timestamptz NOT NULL
  );
  CREATE INDEX blobs_sha ON blobs (sha256);
  CREATE INDEX blobs_account ON blobs (account_id, sha256) WHERE account_id IS NOT NULL;

  CREATE TABLE jobs (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id),
    key_id text NOT NULL REFERENCES api_keys(id),
    kind text NOT NULL CHECK (kind IN ('generation', 'catalog')),
    tool_id text NOT NULL,
    status text NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
    price bigint NOT NULL CHECK (price >= 0),
    input text NOT NULL,
    template_set_id text,
    ready_set_id text,
    error_message text,
    attempts integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    finished_at timestamptz,
    provider text,
    provider_cost_usd double precision,
    -- Team mode: the worker holding the job and until when; a lapsed lease is anyone's to take.
    lease_owner text,
    lease_until timestamptz
  );
  CREATE INDEX jobs_account ON jobs (account_id);
  CREATE INDEX jobs_processing ON jobs (created_at) WHERE status = 'processing';

  -- One row per output unit: a shot of a catalog job, or the single unit of a generation.
  CREATE TABLE job_units (
    job_id text NOT NULL REFERENCES jobs(id),
    idx integer NOT NULL,
    shot_id text,
    status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
    error_message text,
    started_at timestamptz,
    interruptions integer NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, idx)
  );

  CREATE TABLE job_results (
    job_id text NOT NULL REFERENCES jobs(id),
    unit_idx integer NOT NULL,
    n integer NOT NULL,
    blob_id text NOT NULL REFERENCES blobs(id),
    PRIMARY KEY (job_id, unit_idx, n)
  );

  CREATE TABLE template_sets (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id),
    label text NOT NULL,
    tool_id text NOT NULL,
    images text NOT NULL,
    pose text,
    shot_type text,
    style_preset text,
    ratio text,
    cover_url text,
    source_job_id text,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX template_sets_account ON template_sets (account_id);

  CREATE TABLE idempotency (
    account_id text NOT NULL REFERENCES accounts(id),
    endpoint text NOT NULL,
    idem_key text NOT NULL,
    body_hash text NOT NULL,
    status integer NOT NULL,
    response text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, endpoint, idem_key)
  );
`;
