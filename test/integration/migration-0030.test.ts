/**
 * Migration 0030 on a database written before it: images fetched for requests that were then
 * refused (rows no job names) are dropped, everything a job, an upload or a result uses is kept,
 * and job units get their interruption columns.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { CORE_SCHEMA_VERSION, openDatabase } from '../../src/core/db/open';
import * as m0010 from '../../src/core/db/migrations/0010-initial';
import * as m0020 from '../../src/core/db/migrations/0020-provider-cost';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

it('drops fetched blob rows no job names and keeps the rest', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-m0030-'));
  dirs.push(dir);
  const file = path.join(dir, 'core.db');
  const old = openDatabase(file, [
    { version: 10, up: m0010.up },
    { version: 20, up: m0020.up },
  ]);
  const now = new Date().toISOString();
  const sha = (c: string) => c.repeat(64);
  old
    .prepare("INSERT INTO accounts (id, email, created_at) VALUES ('acc', 'a@example.test', ?)")
    .run(now);
  old
    .prepare(
      "INSERT INTO api_keys (id, account_id, hash, prefix, daily_cap, created_at) VALUES ('key', 'acc', 'h', 'p', 500, ?)",
    )
    .run(now);
  const blob = old.prepare(
    'INSERT INTO blobs (id, sha256, mime, size, account_id, origin, created_at) VALUES (?, ?, ?, 10, ?, ?, ?)',
  );
  blob.run('b_refused', sha('a'), 'image/jpeg', 'acc', 'fetched', now);
  blob.run('b_used', sha('b'), 'image/jpeg', 'acc', 'fetched', now);
  blob.run('b_upload', sha('c'), 'image/png', 'acc', 'upload', now);
  blob.run('r_result', sha('d'), 'image/png', null, 'result', now);
  const input = {
    units: [{ images: { user_photo: [{ source: 'blob', sha256: sha('b'), mime: 'image/jpeg' }] } }],
    styling: {},
  };
  old
    .prepare(
      "INSERT INTO jobs (id, account_id, key_id, kind, tool_id, status, price, input, created_at) VALUES ('job', 'acc', 'key', 'generation', 'remove_background', 'completed', 1, ?, ?)",
    )
    .run(JSON.stringify(input), now);
  old.prepare("INSERT INTO job_units (job_id, idx, status) VALUES ('job', 0, 'completed')").run();
  old
    .prepare(
      "INSERT INTO job_results (job_id, unit_idx, n, blob_id) VALUES ('job', 0, 0, 'r_result')",
    )
    .run();
  old.close();

  const db = openDatabase(file);
  try {
    expect(db.pragma('user_version', { simple: true })).toBe(CORE_SCHEMA_VERSION); // 0030 ran, and every later step
    const ids = (db.prepare('SELECT id FROM blobs ORDER BY id').all() as { id: string }[]).map(
      (r) => r.id,
    );
    expect(ids).toEqual(['b_upload', 'b_used', 'r_result']);
    expect(db.prepare('SELECT started_at, interruptions FROM job_units').get()).toEqual({
      started_at: null,
      interruptions: 0,
    });
  } finally {
    db.close();
  }
});
