import type { WritableDB } from '../types';

export function up(db: WritableDB): void {
  db.exec(`
    CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL UNIQUE COLLATE NOCASE,
      balance INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
      plan_status TEXT NOT NULL DEFAULT 'active',
      plan_product_id TEXT NOT NULL DEFAULT 'local_free',
      plan_provider TEXT NOT NULL DEFAULT 'dropshoot',
      plan_is_premium INTEGER NOT NULL DEFAULT 0,
      plan_cancel_at_period_end INTEGER NOT NULL DEFAULT 0,
      plan_renews_at TEXT,
      created_at TEXT NOT NULL
    ) STRICT;

    CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      hash TEXT NOT NULL UNIQUE,
      prefix TEXT NOT NULL,
      daily_cap INTEGER NOT NULL CHECK (daily_cap > 0),
      created_at TEXT NOT NULL,
      revoked_at TEXT
    ) STRICT;
    CREATE INDEX api_keys_account ON api_keys(account_id);

    CREATE TABLE key_usage (
      key_id TEXT NOT NULL REFERENCES api_keys(id),
      day TEXT NOT NULL,
      count INTEGER NOT NULL,
      PRIMARY KEY (key_id, day)
    ) STRICT;

    -- Append-only: triggers below refuse UPDATE and DELETE.
    CREATE TABLE ledger (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      kind TEXT NOT NULL CHECK (kind IN ('grant', 'charge', 'refund')),
      amount INTEGER NOT NULL,
      job_id TEXT,
      balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
      note TEXT,
      created_at TEXT NOT NULL,
      CHECK ((kind = 'charge' AND amount < 0 AND job_id IS NOT NULL)
          OR (kind = 'refund' AND amount > 0 AND job_id IS NOT NULL)
          OR (kind = 'grant' AND amount >= 0))
    ) STRICT;
    CREATE INDEX ledger_account ON ledger(account_id);
    CREATE UNIQUE INDEX ledger_one_charge_per_job ON ledger(job_id) WHERE kind = 'charge';
    CREATE UNIQUE INDEX ledger_one_refund_per_job ON ledger(job_id) WHERE kind = 'refund';
    CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
      BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
    CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
      BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;

    CREATE TABLE blobs (
      id TEXT PRIMARY KEY,
      sha256 TEXT NOT NULL,
      mime TEXT NOT NULL,
      size INTEGER NOT NULL,
      account_id TEXT REFERENCES accounts(id),
      origin TEXT NOT NULL CHECK (origin IN ('upload', 'result', 'fetched')),
      created_at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX blobs_sha ON blobs(sha256);

    CREATE TABLE jobs (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      key_id TEXT NOT NULL REFERENCES api_keys(id),
      kind TEXT NOT NULL CHECK (kind IN ('generation', 'catalog')),
      tool_id TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
      price INTEGER NOT NULL CHECK (price >= 0),
      input TEXT NOT NULL,
      template_set_id TEXT,
      ready_set_id TEXT,
      error_message TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL,
      finished_at TEXT
    ) STRICT;
    CREATE INDEX jobs_account ON jobs(account_id);
    CREATE INDEX jobs_processing ON jobs(status) WHERE status = 'processing';

    -- One row per output unit: a shot of a catalog job, or the single unit of a generation.
    CREATE TABLE job_units (
      job_id TEXT NOT NULL REFERENCES jobs(id),
      idx INTEGER NOT NULL,
      shot_id TEXT,
      status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
      error_message TEXT,
      PRIMARY KEY (job_id, idx)
    ) STRICT;

    CREATE TABLE job_results (
      job_id TEXT NOT NULL REFERENCES jobs(id),
      unit_idx INTEGER NOT NULL,
      n INTEGER NOT NULL,
      blob_id TEXT NOT NULL REFERENCES blobs(id),
      PRIMARY KEY (job_id, unit_idx, n)
    ) STRICT;

    CREATE TABLE template_sets (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      label TEXT NOT NULL,
      tool_id TEXT NOT NULL,
      images TEXT NOT NULL,
      pose TEXT,
      shot_type TEXT,
      style_preset TEXT,
      ratio TEXT,
      cover_url TEXT,
      source_job_id TEXT,
      created_at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX template_sets_account ON template_sets(account_id);

    CREATE TABLE idempotency (
      account_id TEXT NOT NULL REFERENCES accounts(id),
      endpoint TEXT NOT NULL,
      idem_key TEXT NOT NULL,
      body_hash TEXT NOT NULL,
      status INTEGER NOT NULL,
      response TEXT NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (account_id, endpoint, idem_key)
    ) STRICT;
  `);
}
