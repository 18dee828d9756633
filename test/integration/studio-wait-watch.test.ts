/**
 * `run --wait`'s watch of a closed day (issue 10, left over) on a batch of thousands of photos:
 * it checked twice a second by reading every photo of the batch. It now counts them in the
 * database and reads the photos only to write its line: one line when the day closes, one when
 * the next UTC day ends the wait, with the same words as before (studio-run-wait-cap.test.ts runs
 * them in the real `run` process). A real engine and store; the engine is not started, so the only
 * reader of the store is the watch, and no request is sent (the studio's own cap is reached).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import { StudioEngine } from '../../src/studio/engine';
import { batchWaiting, watchTheDay } from '../../src/studio/watch-the-day';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const cutout: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

it('reads the batch’s photos only to write its lines: 2000 photos, a closed day and the next one', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-wait-watch-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  // Nothing listens there: a request sent would fail the test's lines, and none is.
  const client = new HttpClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 1000 });
  cleanups.push(() => client.close());
  let now = new Date('2026-11-26T23:30:00.000Z');
  const engine = new StudioEngine({
    dataDir: root,
    client,
    apiKey: 'k',
    dailyCap: 5,
    now: () => now,
  });
  cleanups.push(() => engine.close());
  for (let i = 0; i < 5; i++) engine.spending.countRequest(); // today's 5 are used: the day is closed
  const batchId = engine.createBatch({ kind: 'run', outputDir: root, autoApprove: true });
  const photos = 2000;
  for (let i = 0; i < photos; i++)
    engine.enqueue({
      batchId,
      sourcePath: path.join(root, `p${i}.jpg`),
      rootDir: root,
      sha256: i.toString(16).padStart(64, '0'),
      recipe: cutout,
    });
  // Two of them paid (a job at the service), one of those refunded: not paid any more.
  const ids = (
    engine.db.prepare('SELECT id FROM items WHERE batch_id = ? ORDER BY position').all(batchId) as {
      id: string;
    }[]
  ).map((r) => r.id);
  engine.db
    .prepare(
      "UPDATE items SET state = 'processing', job_id = 'job-a', job_status = 'processing' WHERE id = ?",
    )
    .run(ids[0]);
  engine.db
    .prepare(
      "UPDATE items SET state = 'processing', job_id = 'job-b', job_status = 'failed' WHERE id = ?",
    )
    .run(ids[1]);
  engine.db.prepare("UPDATE items SET wait_reason = 'daily_cap' WHERE id = ?").run(ids[2]);
  engine.db.prepare("UPDATE items SET state = 'exported' WHERE id = ?").run(ids[3]);
  expect(batchWaiting(engine.db, batchId)).toEqual({ waiting: photos - 1, capped: 1 });

  // Every photo row the store hands out is counted (statements are cached: each wrapped once).
  let photoRows = 0;
  const wrapped = new WeakSet<object>();
  const prepare = engine.db.prepare.bind(engine.db);
  engine.db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    if (wrapped.has(statement)) return statement;
    wrapped.add(statement);
    const count = (row: unknown) => {
      if (row && typeof row === 'object' && 'sourcePath' in row) photoRows++;
    };
    const all = statement.all.bind(statement);
    const get = statement.get.bind(statement);
    statement.all = ((...args: unknown[]) => {
      const rows = all(...args);
      rows.forEach(count);
      return rows;
    }) as typeof statement.all;
    statement.get = ((...args: unknown[]) => {
      const row = get(...args);
      count(row);
      return row;
    }) as typeof statement.get;
    return statement;
  }) as typeof engine.db.prepare;

  const lines: string[] = [];
  let readsAtLine: number[] = [];
  const checkEveryMs = 20;
  const stop = watchTheDay(
    engine,
    batchId,
    (line) => {
      lines.push(line);
      readsAtLine.push(photoRows);
    },
    checkEveryMs,
  );
  cleanups.push(stop);
  const until = async (ok: () => boolean) => {
    while (!ok()) await new Promise((r) => setTimeout(r, 10));
  };
  await until(() => lines.length === 1);
  expect(lines[0]).toBe(
    'daily request cap reached (--daily-cap 5): 5 request(s) used today of 5; waiting until 00:00 UTC (2026-11-27T00:00:00.000Z), in 0 h 30 min (--wait). ' +
      `1 paid job(s) will be collected then: p0.jpg; ${photos - 2} photo(s) not paid for yet`,
  );
  // The line read the batch once, to name the paid jobs.
  expect(readsAtLine[0]).toBe(photos);

  // About 50 checks while the day stays closed: the old watch read 2000 photos at each.
  const before = photoRows;
  await new Promise((r) => setTimeout(r, 50 * checkEveryMs));
  expect(photoRows - before).toBe(0);

  // 00:00 UTC: the wait is over, told with what the first line said was waiting.
  now = new Date('2026-11-27T00:00:01.000Z');
  readsAtLine = [];
  await until(() => lines.length === 2);
  expect(lines[1]).toMatch(
    new RegExp(
      `^the wait for the daily cap is over after \\d+ min \\d+ s \\(a new UTC day, 2026-11-27\\): going on with the 1 paid job\\(s\\) to collect and ${photos - 2} photo\\(s\\) to start$`,
    ),
  );
  expect(photoRows - before).toBe(0);
}, 60_000);
