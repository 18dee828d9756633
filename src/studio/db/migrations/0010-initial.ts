import type Database from 'better-sqlite3';

export function up(db: Database.Database): void {
  db.exec(`
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

    CREATE TABLE folders (
      id TEXT PRIMARY KEY,
      path TEXT NOT NULL UNIQUE,
      output_dir TEXT NOT NULL,
      recipe TEXT NOT NULL,
      paused INTEGER NOT NULL DEFAULT 0,
      wait_reason TEXT,
      created_at TEXT NOT NULL
    ) STRICT;

    CREATE TABLE batches (
      id TEXT PRIMARY KEY,
      folder_id TEXT REFERENCES folders(id) ON DELETE SET NULL,
      kind TEXT NOT NULL CHECK (kind IN ('run', 'folder')),
      output_dir TEXT NOT NULL,
      auto_approve INTEGER NOT NULL DEFAULT 0,
      ceiling INTEGER,
      wait_reason TEXT,
      created_at TEXT NOT NULL
    ) STRICT;

    CREATE TABLE items (
      id TEXT PRIMARY KEY,
      batch_id TEXT NOT NULL REFERENCES batches(id),
      folder_id TEXT REFERENCES folders(id) ON DELETE SET NULL,
      source_path TEXT NOT NULL,
      root_dir TEXT NOT NULL,
      relative_dir TEXT NOT NULL,
      name TEXT NOT NULL,
      sha256 TEXT NOT NULL,
      recipe TEXT NOT NULL,
      recipe_hash TEXT NOT NULL,
      tool_id TEXT NOT NULL,
      state TEXT NOT NULL,
      wait_reason TEXT,
      wait_until TEXT,
      error TEXT,
      note TEXT,
      uncertain INTEGER NOT NULL DEFAULT 0,
      attempts INTEGER NOT NULL DEFAULT 0,
      position REAL NOT NULL,
      upload_key TEXT,
      upload_url TEXT,
      submit_key TEXT,
      submit_request TEXT,
      job_id TEXT,
      result_urls TEXT,
      shot_map TEXT,
      price INTEGER NOT NULL DEFAULT 0,
      diamonds INTEGER NOT NULL DEFAULT 0,
      pack_total INTEGER,
      pack_completed INTEGER,
      pack_failed INTEGER,
      submitted_at TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX items_state ON items(state, position);
    CREATE INDEX items_done ON items(sha256, recipe_hash, state);
    CREATE INDEX items_batch ON items(batch_id);

    CREATE TABLE results (
      id TEXT PRIMARY KEY,
      item_id TEXT NOT NULL REFERENCES items(id),
      n INTEGER NOT NULL,
      shot_id TEXT,
      sha256 TEXT NOT NULL,
      mime TEXT NOT NULL,
      file TEXT NOT NULL,
      thumb TEXT,
      review TEXT NOT NULL DEFAULT 'pending' CHECK (review IN ('pending', 'approved', 'rejected')),
      exported_path TEXT,
      compliance TEXT,
      created_at TEXT NOT NULL,
      UNIQUE (item_id, n)
    ) STRICT;
    CREATE INDEX results_review ON results(review, created_at);

    -- The engine's own count of API requests per service origin and UTC day.
    CREATE TABLE request_log (
      origin TEXT NOT NULL,
      day TEXT NOT NULL,
      count INTEGER NOT NULL,
      PRIMARY KEY (origin, day)
    ) STRICT;
  `);
}
