/**
 * The `dropshoot` CLI contract: admin commands print one JSON line, `serve` prints
 * {"listening": URL} and serves /healthz and /v1, admin commands work on the DIR of a running
 * server, usage errors exit non-zero with usage text.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, expectError, expectSuccess, makeTempDir, removeDir } from './helpers/api';
import {
  cliJson,
  createAccount,
  createKey,
  grant,
  revokeKey,
  runCli,
  spawnServe,
  stopServe,
  uniqueEmail,
  type ServeProcess,
} from './helpers/cli';
import { useTestStorage, type TestStorage } from './helpers/cli-storage';
import { garmentPng } from './helpers/images';
import { testStoreIsPostgres } from './helpers/test-database';

// On SQLite + files, or (v1-on-pg-s3) with every serve and admin child on one PostgreSQL schema
// and bucket: --data is then scratch only, and the admin commands reach the running server's
// rows through DROPSHOOT_DATABASE_URL.
describe('serve and admin on a running server', () => {
  let dir: string;
  let storage: TestStorage;
  let proc: ServeProcess;
  let api: (key: string | null) => Api;

  beforeAll(async () => {
    storage = await useTestStorage();
    dir = makeTempDir('cli-');
    proc = await spawnServe(dir);
    api = (key) => new Api(proc.url, key);
  });
  afterAll(async () => {
    if (proc) await stopServe(proc);
    storage?.release();
    removeDir(dir);
  });

  it('prints {"listening":"http://127.0.0.1:PORT"} and answers /healthz with 200', async () => {
    expect(proc.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(proc.url).port)).toBeGreaterThan(0);
    const res = await fetch(`${proc.url}/healthz`);
    expect(res.status).toBe(200);
    // On PostgreSQL the data dir is scratch only: no SQLite file beside it.
    expect(fs.existsSync(path.join(dir, 'core.db'))).toBe(!storage.team);
  });

  it('create-account prints email, apiKey and keyId; the key works at once on the running server', async () => {
    const email = uniqueEmail('cli');
    const out = await cliJson<{ email: string; apiKey: string; keyId: string }>([
      'admin',
      'create-account',
      '--data',
      dir,
      '--email',
      email,
      '--diamonds',
      '42',
    ]);
    expect(out.email).toBe(email);
    expect(typeof out.apiKey).toBe('string');
    expect(out.apiKey.length).toBeGreaterThanOrEqual(20);
    expect(typeof out.keyId).toBe('string');
    expect(out.keyId).not.toBe(out.apiKey);
    const me = await api(out.apiKey).get('/v1/account');
    expectSuccess(me, 200);
    expect(me.body).toMatchObject({ email, diamondBalance: 42 });
  });

  it('grant prints the new balance and the running server sees it', async () => {
    const acct = await createAccount(dir, 10);
    expect(await grant(dir, acct.email, 15)).toEqual({ diamondBalance: 25 });
    expect(await api(acct.apiKey).balance()).toBe(25);
  });

  it('grant adds to what jobs have spent (a charge made through the server is not lost)', async () => {
    const acct = await createAccount(dir, 5);
    const a = api(acct.apiKey);
    const url = await a.uploadUrl(await garmentPng());
    const id = await a.submit({
      toolId: 'photo_reframe',
      images: { user_photo: url },
      targetRatio: '9:16',
    });
    expect(await grant(dir, acct.email, 1)).toEqual({ diamondBalance: 4 });
    expect((await a.waitForJob(id)).status).toBe('completed');
    expect(await a.balance()).toBe(4);
  });

  it('create-key and revoke-key take effect on the running server immediately', async () => {
    const acct = await createAccount(dir, 0);
    const key = await createKey(dir, acct.email);
    expect(typeof key.apiKey).toBe('string');
    expect(typeof key.keyId).toBe('string');
    expectSuccess(await api(key.apiKey).get('/v1/account'), 200);
    expect(await revokeKey(dir, key.keyId)).toEqual({ revoked: true });
    expectError(await api(key.apiKey).get('/v1/account'), 401);
    expectSuccess(await api(acct.apiKey).get('/v1/account'), 200);
  });

  it('a --daily-cap given to create-key is enforced by the running server', async () => {
    const acct = await createAccount(dir, 0);
    const key = await createKey(dir, acct.email, 2);
    const a = api(key.apiKey);
    expectSuccess(await a.get('/v1/models'), 200);
    expectSuccess(await a.get('/v1/models'), 200);
    expectError(await a.get('/v1/models'), 429, '2', 'reached', 'key');
  });

  it('stops cleanly on SIGTERM', async () => {
    const dir2 = makeTempDir('cli-stop-');
    let p: ServeProcess | undefined;
    try {
      p = await spawnServe(dir2);
      expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
      p.child.kill('SIGTERM');
      const exit = await Promise.race([
        p.exited,
        new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000)),
      ]);
      expect(exit).not.toBe('timeout');
      await expect(fetch(`${p.url}/healthz`)).rejects.toThrow();
    } finally {
      if (p) await stopServe(p, 'SIGKILL');
      removeDir(dir2);
    }
  });

  it('stops cleanly on SIGHUP, every request it answered logged', async () => {
    const dir2 = makeTempDir('cli-hup-');
    let p: ServeProcess | undefined;
    try {
      p = await spawnServe(dir2);
      for (let i = 0; i < 10; i++) expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
      p.child.kill('SIGHUP');
      const exit = await Promise.race([
        p.exited,
        new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000)),
      ]);
      // Before: killed by the signal's default, the last batch of log lines unwritten.
      expect(exit).toEqual({ code: 0, signal: null });
      const answered = p
        .stderr()
        .split('\n')
        .filter((line) => line.includes('/healthz'));
      expect(answered).toHaveLength(10);
    } finally {
      if (p) await stopServe(p, 'SIGKILL');
      removeDir(dir2);
    }
  });
});

// Argument parsing only (no storage is opened): the same on both set-ups, run once.
describe.skipIf(testStoreIsPostgres())('usage errors', () => {
  const cases: [string, string[]][] = [
    ['no command', []],
    ['an unknown command', ['frobnicate']],
    ['an unknown admin command', ['admin', 'delete-everything', '--data', '/tmp/x']],
    ['admin without a subcommand', ['admin']],
    [
      'an unknown flag',
      ['admin', 'grant', '--data', '/tmp/x', '--email', 'a@b.c', '--diamonds', '1', '--bogus'],
    ],
    ['a missing required flag', ['admin', 'create-account', '--data', '/tmp/x', '--diamonds', '5']],
    [
      'a non-numeric --diamonds',
      ['admin', 'create-account', '--data', '/tmp/x', '--email', 'a@b.c', '--diamonds', 'lots'],
    ],
    [
      'a negative --daily-cap',
      ['admin', 'create-key', '--data', '/tmp/x', '--email', 'a@b.c', '--daily-cap', '-3'],
    ],
    ['serve without --data', ['serve', '--port', '0']],
    ['serve with a non-numeric port', ['serve', '--port', 'http', '--data', '/tmp/x']],
  ];

  it.each(cases)(
    'exits non-zero with one line naming the problem and --help for %s',
    async (_label, args) => {
      const res = await runCli(args);
      expect(res.code).not.toBe(0);
      expect(res.code).not.toBeNull();
      const lines = res.stderr.split('\n').filter((l) => l.trim() !== '');
      expect(lines, res.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^dropshoot: .+; see `dropshoot --help` for usage\.$/);
      // The usage text itself is not repeated on every error.
      expect(res.stderr).not.toContain('Usage:');
      // No JSON result line for a failed command.
      expect(res.stdout.trim()).toBe('');
    },
  );

  it('names a missing flag with what to give', async () => {
    const res = await runCli(['run', '--in', 'resources/samples/photos', '--out', '/tmp/x']);
    expect(res.stderr).toBe(
      'dropshoot: missing --recipe (the recipe file, e.g. resources/samples/recipes/cutout-amazon.json); see `dropshoot --help` for usage.\n',
    );
  });

  it.each([['--help'], ['-h'], ['help'], ['run', '--help'], ['generate', '-h']])(
    'prints the usage on stdout and exits 0 for %s',
    async (...args) => {
      const res = await runCli(args);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^Usage: dropshoot <command>/);
      for (const command of ['serve', 'admin', 'run', 'studio', 'generate'])
        expect(res.stdout).toContain(`  ${command} `);
      expect(res.stderr).toBe('');
    },
  );
});

describe('admin errors', () => {
  it('fails with a clear message for grant/create-key on an unknown e-mail', async () => {
    const storage = await useTestStorage();
    const dir = makeTempDir('cli-err-');
    try {
      await createAccount(dir, 1);
      const g = await runCli([
        'admin',
        'grant',
        '--data',
        dir,
        '--email',
        'nobody@example.test',
        '--diamonds',
        '5',
      ]);
      expect(g.code).not.toBe(0);
      expect(g.stderr.trim().length).toBeGreaterThan(0);
      const k = await runCli([
        'admin',
        'create-key',
        '--data',
        dir,
        '--email',
        'nobody@example.test',
      ]);
      expect(k.code).not.toBe(0);
      expect(k.stderr.trim().length).toBeGreaterThan(0);
    } finally {
      storage.release();
      removeDir(dir);
    }
  });
});
