import type Database from 'better-sqlite3';

/**
 * What an item runs gets its own column, `items.kind` ('tool', 'look', 'ready_shoot'), instead of
 * fake tool ids in `items.tool_id` ('catalog' for a ready shoot, 'template' for a look naming no
 * tool): `tool_id` now holds a tool id or NULL. Job times and learnt prices were keyed by the same
 * fake ids: they take the group names (`jobGroup`, src/shared/studio.ts), and the job-times column
 * says what it holds.
 */
export function up(db: Database.Database): void {
  db.exec(`
    ALTER TABLE items ADD COLUMN kind TEXT NOT NULL DEFAULT 'tool'
      CHECK (kind IN ('tool', 'look', 'ready_shoot'));
    UPDATE items SET kind = CASE
      WHEN tool_id = 'catalog' THEN 'ready_shoot'
      WHEN tool_id = 'template' OR json_extract(recipe, '$.request.templateSetId') IS NOT NULL
        THEN 'look'
      ELSE 'tool' END;

    -- NOT NULL cannot be dropped in place: a nullable copy replaces the column.
    ALTER TABLE items ADD COLUMN tool TEXT;
    UPDATE items SET tool = CASE WHEN tool_id IN ('catalog', 'template') THEN NULL ELSE tool_id END;
    ALTER TABLE items DROP COLUMN tool_id;
    ALTER TABLE items RENAME COLUMN tool TO tool_id;

    ALTER TABLE job_times RENAME COLUMN tool_id TO job_group;
    UPDATE job_times SET job_group = 'ready_shoot' WHERE job_group = 'catalog';
    UPDATE job_times SET job_group = 'look' WHERE job_group = 'template';

    UPDATE settings SET key = substr(key, 1, length(key) - length('catalog-shot')) || 'ready_shoot_shot'
      WHERE key LIKE 'price:%:catalog-shot';
    UPDATE settings SET key = substr(key, 1, length(key) - length('template')) || 'look'
      WHERE key LIKE 'price:%:template';
  `);
}
