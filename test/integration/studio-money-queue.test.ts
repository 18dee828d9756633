/**
 * The queue's money rule on a real studio database: a photo whose job was paid (and not failed by
 * the service) is adopted and collected, never queued to be paid again; one whose job the service
 * failed (refunded) is queued anew.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import * as store from '../../src/studio/db/store';
import { up as markRefunded } from '../../src/studio/db/migrations/0050-refunded-jobs';
import { enqueue, retryItem } from '../../src/studio/queue';
import { scratchStudioDb } from '../support/scratch-studio-db';

const recipe: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};
const now = new Date('2026-01-01T10:00:00Z');

function setup() {
  const db = scratchStudioDb('queue');
  const dir = path.dirname(db.name);
  const batch = (id: string) =>
    db
      .prepare(
        "INSERT INTO batches (id, kind, output_dir, auto_approve, created_at) VALUES (?, 'run', ?, 1, ?)",
      )
      .run(id, path.join(dir, 'out'), now.toISOString());
  batch('batch_1');
  batch('batch_2');
  const photo = (sha: string, batchId: string) =>
    enqueue(
      db,
      { batchId, sourcePath: path.join(dir, `${sha}.jpg`), rootDir: dir, sha256: sha, recipe },
      now,
    );
  return { db, photo };
}

it('a failed item with a paid job is adopted by the next run and goes back to collecting it', () => {
  const { db, photo } = setup();
  const first = photo('aaa', 'batch_1');
  // Charged and completed, then the export failed on the studio side.
  store.updateItem(
    db,
    first.id,
    {
      state: 'failed',
      jobId: 'job-1',
      jobStatus: 'completed',
      diamonds: 1,
      resultUrls: JSON.stringify(['https://cdn.example/r1']),
      error: 'EACCES: export folder not writable',
    },
    now,
  );
  const again = photo('aaa', 'batch_2');
  expect(again).toEqual({ id: first.id, adopted: true });
  expect(store.getItem(db, first.id)).toMatchObject({
    batchId: 'batch_2',
    state: 'downloading',
    jobId: 'job-1',
    error: null,
  });
  expect(store.listItems(db, { limit: 10, offset: 0 }).total).toBe(1);
});

it('a job the service failed (refunded) does not hold the photo: it is queued again', () => {
  const { db, photo } = setup();
  const first = photo('bbb', 'batch_1');
  store.updateItem(
    db,
    first.id,
    {
      state: 'failed',
      jobId: 'job-2',
      jobStatus: 'failed',
      diamonds: 0,
      error: 'the model could not find a garment',
    },
    now,
  );
  const again = photo('bbb', 'batch_2');
  expect(again.adopted).toBe(false);
  expect(store.getItem(db, again.id)).toMatchObject({ state: 'queued', jobId: null });
});

it('retry of a paid item re-polls its job; retry of an unpaid one starts over', () => {
  const { db, photo } = setup();
  const paid = photo('ccc', 'batch_1');
  store.updateItem(
    db,
    paid.id,
    {
      state: 'failed',
      jobId: 'job-3',
      jobStatus: 'processing',
      diamonds: 4,
      error: 'gave up polling',
    },
    now,
  );
  retryItem(db, store.getItem(db, paid.id)!, '/x/ccc.jpg', now);
  expect(store.getItem(db, paid.id)).toMatchObject({
    state: 'processing',
    jobId: 'job-3',
    diamonds: 4,
    uploadKey: null,
  });
  const unpaid = photo('ddd', 'batch_1');
  store.updateItem(db, unpaid.id, { state: 'failed', error: '400: missing image' }, now);
  retryItem(db, store.getItem(db, unpaid.id)!, '/x/ddd.jpg', now);
  expect(store.getItem(db, unpaid.id)).toMatchObject({ state: 'queued', jobId: null });
});

it('items failed before job statuses were kept: refunded ones (0 diamonds) are marked failed at the service', () => {
  const { db, photo } = setup();
  const refunded = photo('eee', 'batch_1');
  const paid = photo('fff', 'batch_1');
  store.updateItem(
    db,
    refunded.id,
    { state: 'failed', jobId: 'job-4', jobStatus: null, diamonds: 0 },
    now,
  );
  store.updateItem(
    db,
    paid.id,
    { state: 'failed', jobId: 'job-5', jobStatus: null, diamonds: 4 },
    now,
  );
  markRefunded(db);
  expect(store.getItem(db, refunded.id)?.jobStatus).toBe('failed');
  expect(store.getItem(db, paid.id)?.jobStatus).toBeNull();
});

it('a photo dropped again after every result was rejected is skipped with the reason, not paid again', () => {
  const { db, photo } = setup();
  const first = photo('ddd', 'batch_1');
  store.updateItem(
    db,
    first.id,
    {
      state: 'rejected',
      jobId: 'job-4',
      jobStatus: 'completed',
      diamonds: 1,
      resultUrls: JSON.stringify(['https://cdn.example/r4']),
    },
    now,
  );
  const again = photo('ddd', 'batch_2');
  expect(again.adopted).toBe(false);
  const skipped = store.getItem(db, again.id)!;
  expect(skipped.state).toBe('skipped');
  expect(skipped.note).toContain('rejected in review (use Redo to generate it again)');
});

it('a file rejected as not a photo does not hold the same bytes: they are looked at again', () => {
  const { db, photo } = setup();
  const first = photo('eee', 'batch_1');
  store.updateItem(
    db,
    first.id,
    { state: 'rejected', error: 'Not a photo: the file is empty (0 bytes).' },
    now,
  );
  const again = photo('eee', 'batch_2');
  expect(again.adopted).toBe(false);
  expect(store.getItem(db, again.id)).toMatchObject({ state: 'queued' });
});
