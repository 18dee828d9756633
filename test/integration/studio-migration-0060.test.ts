/**
 * Studio migration 0060 on a data file written by the schema before it (version 50): items that
 * held a fake tool id ('catalog' for a ready shoot, 'template' for a look) get their kind and a
 * NULL tool id, real tool ids stay, and job times and learnt prices keyed by the fake ids move
 * to the job-group names the engine now reads.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { migrate } from '../../src/infra/sqlite-migrations';
import { openStudioDatabase } from '../../src/studio/db/open';
import * as store from '../../src/studio/db/store';
import * as m0010 from '../../src/studio/db/migrations/0010-initial';
import * as m0020 from '../../src/studio/db/migrations/0020-moved-sources';
import * as m0040 from '../../src/studio/db/migrations/0040-money-path';
import * as m0050 from '../../src/studio/db/migrations/0050-refunded-jobs';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const recipe = (request: object) =>
  JSON.stringify({
    request,
    export: { preset: 'original', format: 'jpeg', quality: 90, naming: '{name}-{tool}-{n}' },
  });

/** A studio.db as the build before 0060 left it, with one item of each kind. */
function oldDataFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-studio-m0060-'));
  dirs.push(dir);
  const file = path.join(dir, 'studio.db');
  const db = new Database(file);
  migrate(db, file, [
    { version: 10, up: m0010.up },
    { version: 20, up: m0020.up },
    { version: 40, up: m0040.up },
    { version: 50, up: m0050.up },
  ]);
  const now = '2026-11-01T10:00:00.000Z';
  db.prepare(
    "INSERT INTO batches (id, kind, output_dir, created_at) VALUES ('b', 'run', '/out', ?)",
  ).run(now);
  const item = db.prepare(
    `INSERT INTO items (id, batch_id, source_path, root_dir, relative_dir, name, sha256, recipe,
       recipe_hash, tool_id, state, position, created_at, updated_at)
     VALUES (?, 'b', ?, '/in', '', ?, 'sha', ?, 'h', ?, 'exported', ?, ?, ?)`,
  );
  const photo = { garment_photo: '{photo}' };
  const rows: [string, object, string][] = [
    ['i_tool', { toolId: 'virtual_model', images: photo }, 'virtual_model'],
    ['i_ready', { readyTemplateSetId: 'rts_studio_basics', images: photo }, 'catalog'],
    ['i_look', { templateSetId: 'ts_1', images: photo }, 'template'],
    [
      'i_look_tool',
      { templateSetId: 'ts_2', toolId: 'outfit_photo', images: photo },
      'outfit_photo',
    ],
  ];
  rows.forEach(([id, request, toolId], i) =>
    item.run(id, `/in/${id}.jpg`, `${id}.jpg`, recipe(request), toolId, i + 1, now, now),
  );
  const time = db.prepare('INSERT INTO job_times (tool_id, ms, at) VALUES (?, ?, ?)');
  time.run('catalog', 2400, now);
  time.run('template', 900, now);
  time.run('virtual_model', 700, now);
  const setting = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)');
  setting.run('price:http://127.0.0.1:8787#abc:catalog-shot', '4');
  setting.run('price:http://127.0.0.1:8787#abc:template', '6');
  setting.run('price:embedded:virtual_model', '4');
  setting.run('shots:rts_studio_basics', '4');
  expect(db.pragma('user_version', { simple: true })).toBe(50);
  db.close();
  return file;
}

it('gives every item its kind and a real tool id or none', () => {
  const db = openStudioDatabase(oldDataFile());
  try {
    const items = ['i_tool', 'i_ready', 'i_look', 'i_look_tool'].map((id) =>
      store.itemView(store.getItem(db, id)!),
    );
    expect(items.map((i) => [i.id, i.kind, i.toolId])).toEqual([
      ['i_tool', 'tool', 'virtual_model'],
      ['i_ready', 'ready_shoot', null],
      ['i_look', 'look', null],
      ['i_look_tool', 'look', 'outfit_photo'],
    ]);
    // Everything else about the items is kept.
    expect(items.map((i) => [i.state, i.name])).toEqual([
      ['exported', 'i_tool.jpg'],
      ['exported', 'i_ready.jpg'],
      ['exported', 'i_look.jpg'],
      ['exported', 'i_look_tool.jpg'],
    ]);
  } finally {
    db.close();
  }
});

it('moves job times and learnt prices from the fake tool ids to the job groups', () => {
  const db = openStudioDatabase(oldDataFile());
  try {
    expect(
      db.prepare('SELECT job_group AS g, ms FROM job_times ORDER BY ms').all() as object[],
    ).toEqual([
      { g: 'virtual_model', ms: 700 },
      { g: 'look', ms: 900 },
      { g: 'ready_shoot', ms: 2400 },
    ]);
    expect(db.prepare('SELECT key, value FROM settings ORDER BY key').all()).toEqual([
      { key: 'price:embedded:virtual_model', value: '4' },
      { key: 'price:http://127.0.0.1:8787#abc:look', value: '6' },
      { key: 'price:http://127.0.0.1:8787#abc:ready_shoot_shot', value: '4' },
      { key: 'shots:rts_studio_basics', value: '4' },
    ]);
  } finally {
    db.close();
  }
});

it('refuses any other kind, and new items keep no tool id for a ready shoot', () => {
  const db = openStudioDatabase(oldDataFile());
  try {
    expect(() => db.prepare("UPDATE items SET kind = 'catalog' WHERE id = 'i_tool'").run()).toThrow(
      /CHECK constraint failed/,
    );
    store.insertItem(db, {
      id: 'i_new',
      batchId: 'b',
      folderId: null,
      sourcePath: '/in/new.jpg',
      rootDir: '/in',
      relativeDir: '',
      name: 'new.jpg',
      sha256: 'sha2',
      recipe: recipe({ readyTemplateSetId: 'rts_studio_basics', images: {} }),
      recipeHash: 'h2',
      kind: 'ready_shoot',
      toolId: null,
      state: 'queued',
      waitReason: null,
      note: null,
      createdAt: '2026-11-02T10:00:00.000Z',
    });
    expect(store.getItem(db, 'i_new')).toMatchObject({ kind: 'ready_shoot', toolId: null });
  } finally {
    db.close();
  }
});
