/**
 * A studio database file in a folder of its own under the temp folder, for one test: closed and
 * removed when the test ends, so a test run leaves nothing behind in the machine's temp folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { openStudioDatabase, type StudioDB } from '../../src/studio/db/open';

export function scratchStudioDb(tag: string): StudioDB {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-${tag}-`));
  const db = openStudioDatabase(path.join(dir, 'studio.db'));
  onTestFinished(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return db;
}
