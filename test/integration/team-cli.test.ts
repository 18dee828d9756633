/**
 * `serve` and `admin` choosing their store by configuration (issue 14): `--database URL` or
 * DROPSHOOT_DATABASE_URL (the flag wins), SQLite under --data when neither is set; malformed URLs
 * and team-only flags without a database are usage errors that never show the password.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describePostgres } from '../support/postgres';
import { makeTempDir, removeDir } from './helpers/api';
import { cliJson, runCli, uniqueEmail } from './helpers/cli';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) removeDir(dir);
});
const tempDir = () => {
  const dir = makeTempDir('team-cli-');
  dirs.push(dir);
  return dir;
};

describe('serve and admin: store flags', () => {
  it('refuses a database URL that is not PostgreSQL, naming the flag and not the password', async () => {
    const res = await runCli([
      'admin',
      'create-account',
      '--database',
      'mysql://root:hunter2-secret@db.internal/dropshoot',
      '--email',
      'x@example.test',
      '--diamonds',
      '1',
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--database');
    expect(res.stderr).toContain('postgres://');
    expect(res.stderr).not.toContain('hunter2-secret');
  });

  it('refuses --workers 0 and --lease-seconds without a database (SQLite runs every job itself)', async () => {
    const data = tempDir();
    for (const extra of [
      ['--workers', '0'],
      ['--lease-seconds', '5'],
    ]) {
      const res = await runCli(['serve', '--port', '0', '--data', data, ...extra]);
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain('needs --database');
    }
    // Nothing was opened: no SQLite file was made.
    expect(fs.existsSync(path.join(data, 'core.db'))).toBe(false);
  });
});

describePostgres('admin on PostgreSQL', (databaseUrl) => {
  it('writes accounts to the database of --database (over DROPSHOOT_DATABASE_URL), no --data needed', async () => {
    const email = uniqueEmail('team-cli');
    const made = await cliJson<{ apiKey: string }>([
      'admin',
      'create-account',
      '--database',
      databaseUrl(),
      '--email',
      email,
      '--diamonds',
      '7',
    ]);
    expect(made.apiKey).toMatch(/\S{20,}/);
    // The environment variable names the same database: grant finds the account there.
    const previous = process.env.DROPSHOOT_DATABASE_URL;
    process.env.DROPSHOOT_DATABASE_URL = databaseUrl();
    try {
      const granted = await cliJson<{ diamondBalance: number }>([
        'admin',
        'grant',
        '--email',
        email,
        '--diamonds',
        '5',
      ]);
      expect(granted.diamondBalance).toBe(12);
    } finally {
      if (previous === undefined) delete process.env.DROPSHOOT_DATABASE_URL;
      else process.env.DROPSHOOT_DATABASE_URL = previous;
    }
    // With neither set, admin is back on SQLite under --data, where this account does not exist.
    const res = await runCli([
      'admin',
      'grant',
      '--data',
      tempDir(),
      '--email',
      email,
      '--diamonds',
      '5',
    ]);
    expect(res.code).toBe(1);
  });
});
